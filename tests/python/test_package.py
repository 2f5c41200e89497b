"""The analysis package's shape, read from its source with ast: its modules
import each other without a cycle, and none imports another's private
(_underscored) names. Imports inside functions count: a lazy import that
closes a cycle only hides it.
"""

import ast

import pytest

from conftest import ANALYSIS

PACKAGE = ANALYSIS / "aifsim"


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__")
                                         and name.endswith("__"))


def _package_imports(path, package, modules):
    """(module imported, name imported or None) for each import of the
    package's own modules in the file `path`. `from . import x` imports
    module x when there is one, else the name x of __init__."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == package:
                    yield (parts[1] if len(parts) > 1 else "__init__"), None
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] != package:
                    continue
                target = parts[1] if len(parts) > 1 else None
            else:
                assert node.level == 1, "%s: import from above the package" \
                    % path.name
                target = node.module
            for alias in node.names:
                if target is None and alias.name in modules:
                    yield alias.name, None
                else:
                    yield target or "__init__", alias.name


def import_graph(package_dir):
    """{module: {modules it imports}} and [(importer, module, private name)]
    for the package in `package_dir`."""
    modules = {p.stem: p for p in sorted(package_dir.glob("*.py"))}
    graph, private = {}, []
    for name, path in modules.items():
        graph[name] = set()
        for target, imported in _package_imports(path, package_dir.name,
                                                 modules):
            assert target in modules, "%s imports %s, which is not a " \
                "module of the package" % (name, target)
            if target != name:
                graph[name].add(target)
            if imported and target != name and _is_private(imported):
                private.append((name, target, imported))
    return graph, private


def find_cycle(graph):
    """One import cycle as [a, b, ..., a], or None."""
    done, path = set(), []

    def visit(node):
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(graph[node]):
            cycle = visit(nxt)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start)
        if cycle:
            return cycle
    return None


def test_no_import_cycle():
    graph, _ = import_graph(PACKAGE)
    assert {"run", "reports", "plot", "units"} <= set(graph)  # found them
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_private_name_imported_across_modules():
    _, private = import_graph(PACKAGE)
    assert not private, ["%s imports %s from %s" % (a, n, b)
                         for a, b, n in private]


@pytest.fixture()
def bad_package(tmp_path):
    """A package with what the two tests above must catch: a cycle closed
    by an import inside a function, and a private helper imported."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import top\n")
    (pkg / "a.py").write_text("from .b import _helper\n\ndef top():\n"
                              "    return _helper()\n")
    (pkg / "b.py").write_text("def _helper():\n    from . import a\n"
                              "    return a\n")
    (pkg / "c.py").write_text("import pkg.a\nfrom . import __init__\n")
    return pkg


def test_the_checks_catch_a_lazy_cycle_and_a_private_import(bad_package):
    graph, private = import_graph(bad_package)
    assert graph["c"] == {"a", "__init__"}
    assert find_cycle(graph) in (["a", "b", "a"], ["b", "a", "b"])
    assert private == [("a", "b", "_helper")]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
