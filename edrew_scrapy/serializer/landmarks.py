"""What an element inherits from its ancestors (_Ctx): hidden, inside a boilerplate container (a dialog,
<nav>, a page <footer>, <aside>, or their ARIA roles), inside the main content (<article>, <main>), in the
<head>, in a link. The flags are Node.hidden and Node.boilerplate; they change no token of the reTPS."""
from __future__ import annotations

import re
from typing import NamedTuple

from ..tokenizer import parse_attributes
from .settings import (
    _ARIA_BOILERPLATE,
    _ARIA_ROLES,
    _ARIA_WORDS,
    _BOILERPLATE_TAGS,
    _HIDDEN_STYLE,
    _NAV_ELEMENT,
)


def _landmark(role: str, boilerplate: str, in_main: bool) -> tuple[str, bool]:
    """(boilerplate, in_main) after an element's ARIA role: main/article mark the main content, the
    other landmarks boilerplate unless the element already is."""
    if role == "main" or role == "article":
        return ("" if boilerplate == "footer" else boilerplate), True
    if not boilerplate:
        boilerplate = _ARIA_BOILERPLATE.get(role, "")
        if boilerplate == "footer" and in_main:
            boilerplate = ""  # as for <footer>: an article's own
    return boilerplate, in_main


class _Ctx(NamedTuple):
    """What an element inherits from its ancestors. Most elements change none of it, so they share
    their parent's object: one reference a record instead of five fields."""

    hidden: bool
    boilerplate: str  # "dialog", "nav", "footer" or "aside": such a container, here or above
    in_main: bool     # an <article> or <main>, here or above
    in_head: bool
    in_link: bool     # inside an <a>: all its text is link text


_ROOT_CTX = _Ctx(False, "", False, False, False)
# Names and attributes that can change an element's _Ctx; an element with neither shares its parent's.
_CTX_TAGS = frozenset({"dialog", "nav", "footer", "aside", "article", "main", "head", "a"})
_CTX_ATTRS = frozenset({"hidden", "style", "role", "aria-modal"})


def _tag_ctx(name: str, ctx: _Ctx) -> _Ctx:
    """The context of a `name` element under `ctx`, before its attributes are read; one shared object per
    (name, ctx), so that every <a> of a page does not build its own."""
    got = _TAG_CTXS.get((name, ctx))
    if got is None:
        got = _new_tag_ctx(name, ctx)
        if len(_TAG_CTXS) < 10_000:  # custom element names are the page's own: bounded
            _TAG_CTXS[(name, ctx)] = got
    return got


_TAG_CTXS: dict = {}


def _new_tag_ctx(name: str, ctx: _Ctx) -> _Ctx:
    in_main = ctx.in_main or name == "article" or name == "main"
    boilerplate = ctx.boilerplate or _BOILERPLATE_TAGS.get(name, "") or ("nav" if _is_nav_element(name) else "")
    if boilerplate == "footer" and in_main:
        boilerplate = ""  # an article's own footer (author, date, tags) can be its content
    return _Ctx(ctx.hidden, boilerplate, in_main, ctx.in_head or name == "head", ctx.in_link or name == "a")


def _attrs_ctx(attrs: dict, ctx: _Ctx) -> _Ctx:
    """The context after the element's own attributes (parsed): hidden, a dialog, an ARIA landmark.
    `ctx` itself when they change nothing, so that it stays shared."""
    hidden, boilerplate, in_main = ctx.hidden, ctx.boilerplate, ctx.in_main
    if hidden and boilerplate:
        return ctx
    if not hidden and ("hidden" in attrs or "style" in attrs):
        hidden = _is_hidden(attrs)
    if not boilerplate and ("role" in attrs or "aria-modal" in attrs) and _is_dialog(attrs):
        boilerplate = "dialog"
    if "role" in attrs:
        boilerplate, in_main = _landmark(_aria_role(attrs), boilerplate, in_main)
    if hidden == ctx.hidden and boilerplate == ctx.boilerplate and in_main == ctx.in_main:
        return ctx
    return _Ctx(hidden, boilerplate, in_main, ctx.in_head, ctx.in_link)


def _raw_attrs_ctx(raw_attrs: str, ctx: _Ctx) -> _Ctx:
    """_attrs_ctx on attribute text as written (our tokenizer's): parsed only when cheap checks on the
    lower-cased text find a word the rules look for."""
    hidden, boilerplate, in_main = ctx.hidden, ctx.boilerplate, ctx.in_main
    if hidden and boilerplate:
        return ctx
    attrs = None
    low = raw_attrs.lower()
    if not hidden and ("hidden" in low or "none" in low):
        attrs = parse_attributes(raw_attrs)
        hidden = _is_hidden(attrs)
    if not boilerplate and ("dialog" in low or "modal" in low):
        if _is_dialog(attrs if attrs is not None else parse_attributes(raw_attrs)):
            boilerplate = "dialog"
    if "role" in low and _LANDMARK_WORD.search(low) and _names_a_landmark(low):
        if attrs is None:
            attrs = parse_attributes(raw_attrs)
        boilerplate, in_main = _landmark(_aria_role(attrs), boilerplate, in_main)
    if hidden == ctx.hidden and boilerplate == ctx.boilerplate and in_main == ctx.in_main:
        return ctx
    return _Ctx(hidden, boilerplate, in_main, ctx.in_head, ctx.in_link)


def _is_nav_element(name: str) -> bool:
    return _NAV_ELEMENT.match(name) is not None


_LANDMARK_WORD = re.compile("|".join(_ARIA_WORDS))
_ROLE_VALUE = re.compile(r"""(?<![\w-])role\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def _names_a_landmark(low: str) -> bool:
    """A pre-check on the lower-cased attribute text: a role attribute whose value holds one of
    _ARIA_WORDS. Pages put role="button", "menuitem" ... on many elements whose classes say "main-menu";
    those are not parsed (parsing them cost 3 % of the serializer's time; these checks cost 1-2 %)."""
    m = _ROLE_VALUE.search(low)
    if m is None:
        return False
    value = m.group(1) or m.group(2) or m.group(3) or ""
    return any(word in value for word in _ARIA_WORDS)


def _aria_role(attrs: dict) -> str:
    """The element's ARIA role (lower case), "" when its role attribute names none."""
    for token in (attrs.get("role") or "").lower().split():
        if token in _ARIA_ROLES:
            return token
    return ""


def _is_dialog(attrs: dict) -> bool:
    """A modal or dialog box by its ARIA markup (role="dialog"/"alertdialog", aria-modal="true"): cookie
    and consent banners, terms and policies, sign-up and "quick view" boxes, mostly closed until a click.
    A `<dialog>` element counts too (its implicit role). See docs/method-choices.md."""
    roles = (attrs.get("role") or "").lower().split()
    return "dialog" in roles or "alertdialog" in roles or (attrs.get("aria-modal") or "").strip().lower() == "true"


def _is_hidden(attrs: dict) -> bool:
    if "hidden" in attrs:
        return True
    style = attrs.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style) is not None
