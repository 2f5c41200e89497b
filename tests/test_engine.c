#include "test_util.h"
int main(void) { return 0; }
