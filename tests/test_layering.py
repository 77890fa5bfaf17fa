"""Imports flow one way, reports -> experiments -> ensembles, and never in a circle: not between
two modules, nor between two folders (experiments/data/ and experiments/store/ are rooms; a
module at a package's top is a room of its own). Read from the source (ast), imports under
`if TYPE_CHECKING:` left out."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ensembles", "experiments", "reports")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if path.name == "__init__.py" else parts)


MODULES = {module_name(path): path for package in PACKAGES
           for path in (ROOT / package).rglob("*.py")}  # fmt: skip


def imported(path: Path) -> set[str]:
    """The project's modules that the file imports at run time."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in names if name in MODULES}


GRAPH = {name: imported(path) - {name} for name, path in MODULES.items()}


def room(name: str) -> str:
    """The folder a module lives in below its top package, else the module itself."""
    parts = name.split(".")
    is_package = MODULES[name].name == "__init__.py"
    return ".".join(parts[:2]) if len(parts) > 2 or (is_package and len(parts) == 2) else name


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others():
    assert circles(GRAPH) == []


def test_no_two_folders_import_each_other():
    rooms: dict[str, set[str]] = {}
    for name, targets in GRAPH.items():
        rooms.setdefault(room(name), set()).update(room(t) for t in targets)
    assert circles({name: targets - {name} for name, targets in rooms.items()}) == []


@pytest.mark.parametrize("lower, upper", [("ensembles", "experiments"), ("ensembles", "reports"),
                                          ("experiments", "reports")])
def test_no_import_back_up(lower, upper):
    assert [(name, target) for name, targets in GRAPH.items() if name.startswith(lower + ".")
            for target in targets if target.split(".")[0] == upper] == []
