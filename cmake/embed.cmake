# embed.cmake - writes file IN into a C source OUT as
#   const unsigned char SYMBOL[]; const size_t SYMBOL_size;
# (NUL-terminated, so it can be used as a string).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
string(LENGTH "${hex}" hexlen)
math(EXPR size "${hexlen} / 2")
file(WRITE ${OUT}
  "/* Generated from ${IN} by cmake/embed.cmake; do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\n"
  "const size_t ${SYMBOL}_size = ${size};\n")
