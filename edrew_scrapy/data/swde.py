"""SWDE reader (Hao et al., "From One Tree to a Forest", SIGIR 2011).

Layout: `ROOT/pages/VERTICAL-SITE-N/NNNN.htm[.gz]` (each page starts with a `<base href=...>` line added
by SWDE) and `ROOT/groundtruth/VERTICAL-SITE-ATTR.txt`: line 1 `vertical site attr`, line 2 counts,
then `pageID<TAB>n<TAB>value1<TAB>...` (values may be `<NULL>`). A node is relevant when it carries one
of its page's attribute values (:func:`edrew_scrapy.data.align.match_values`); `meta["node_attrs"]`
keeps which attributes, per node, for attribute-level models. A file that cannot be read raises
:class:`edrew_scrapy.data.DatasetError` naming it.
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from . import DatasetError, LabelledPage, read_source, read_text
from .align import ValueMatchConfig, match_values

__all__ = ["iter_pages", "site_folders", "load_groundtruth", "attributes"]

_DIR = re.compile(r"^(?P<vertical>[a-z]+)-(?P<site>.+)-(?P<n>\d+)$")
_BASE = re.compile(rb"<base\s+href\s*=\s*[\"']([^\"']+)[\"']", re.I)


def site_folders(root) -> List[Tuple[str, str, Path]]:
    """(vertical, site, page folder) for each folder under ROOT/pages, sorted; none when ROOT has no
    pages folder (the commands then say where they looked)."""
    pages = Path(root) / "pages"
    if not pages.is_dir():
        return []
    out = []
    for d in sorted(pages.iterdir()):
        m = _DIR.match(d.name)
        if d.is_dir() and m:
            out.append((m["vertical"], m["site"], d))
    return out


def attributes(root, sites: Optional[Iterable[str]] = None) -> List[str]:
    """The attributes that ROOT's groundtruth files hold (for `sites` only, when given), sorted."""
    wanted = set(sites) if sites is not None else None
    found = set()
    for path in sorted((Path(root) / "groundtruth").glob("*.txt")):
        lines = read_text(path, first_line=True).splitlines()
        header = lines[0].split("\t") if lines else []
        if len(header) >= 3 and (wanted is None or header[1] in wanted):
            found.add(header[2].strip())
    return sorted(found)


def load_groundtruth(root, vertical: str, site: str,
                     attrs: Optional[Iterable[str]] = None) -> Dict[str, Dict[str, List[str]]]:
    """page id -> attribute -> values (`<NULL>` dropped) for one site."""
    wanted = set(attrs) if attrs is not None else None
    out: Dict[str, Dict[str, List[str]]] = defaultdict(dict)
    for path in sorted((Path(root) / "groundtruth").glob(f"{vertical}-{site}-*.txt")):
        # the header says which attribute a file holds; site names may themselves contain "-"
        lines = read_text(path).splitlines()
        header = lines[0].split("\t") if lines else []
        if len(header) < 3:  # not a ground-truth file: skipping it would score its pages against nothing
            raise DatasetError(f"{path}: line 1 must be 'vertical<TAB>site<TAB>attribute', "
                               f"not {(lines[0] if lines else '')[:80]!r}")
        if header[1] != site:
            continue
        attr = header[2].strip()
        if wanted is not None and attr not in wanted:
            continue
        for line in lines[2:]:
            cols = line.split("\t")
            if len(cols) < 2 or not cols[0].strip():
                continue
            values = [v.strip() for v in cols[2:] if v.strip() and v.strip() != "<NULL>"]
            out[cols[0].strip()][attr] = values
    return dict(out)


def page_files(folder: Path) -> List[Tuple[str, Path]]:
    """(page id, file) for each page of a site folder, in page-id order; .htm(l) and .htm(l).gz alike."""
    files = {}
    for p in folder.iterdir():
        name = p.name
        for suffix in (".htm.gz", ".html.gz", ".htm", ".html"):
            if name.endswith(suffix):
                files.setdefault(name[: -len(suffix)], p)
    return sorted(files.items())


def iter_pages(root, sites: Optional[Iterable[str]] = None, attrs: Optional[Iterable[str]] = None, *,
               match_config: ValueMatchConfig = ValueMatchConfig()) -> Iterator[LabelledPage]:
    """Serialized, labelled SWDE pages, site by site, in page-id order."""
    from ..serializer import serialize

    wanted = set(sites) if sites is not None else None
    attrs = list(attrs) if attrs is not None else None
    for vertical, site, folder in site_folders(root):
        if wanted is not None and site not in wanted:
            continue
        truth = load_groundtruth(root, vertical, site, attrs)
        for page_id, path in page_files(folder):
            data = read_source(path)
            m = _BASE.search(data[:2048])
            url = m.group(1).decode("latin-1") if m else None
            page = serialize(data, url=url)
            values = truth.get(page_id, {})
            labels, node_attrs = match_values([n.content for n in page.nodes], values, match_config)
            yield LabelledPage(
                page_id=f"{site}/{page_id}", url=url, domain=site, page_type_or_site=site, page=page,
                labels=labels,
                meta={"source": str(path), "vertical": vertical, "values": values,
                      "node_attrs": node_attrs},
            )
