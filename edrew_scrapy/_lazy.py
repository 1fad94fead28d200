"""Package attributes that load their module on first use, so that importing a package stays light."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, List, Tuple


def lazy_attributes(package: str, names: Dict[str, str],
                    namespace: Dict[str, Any]) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """The package's `__getattr__` and `__dir__` for `names` (public name -> module that defines it);
    a name is imported once and then kept in the package's `namespace`."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> List[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
