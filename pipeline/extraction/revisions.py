"""What a signed PDF's later revisions change: whether what a signature signed still reads as
it was signed.

A PDF is saved by appending an incremental update to it: a later signature, a document
timestamp, the validation data that keeps a signature checkable for years (a DSS dictionary
of certificates, OCSP responses and CRLs: PAdES B-LT and B-LTA, as Acrobat's "LTV enabled"
saves), or an edit (a filled field, a new page, a new title). The first three leave the
signed content as it was; a compliance team must hear of the last. Each object a later
revision (re)defines is compared with the signed revision's, and passes as signing only
where it adds signatures or validation data; anything else, or anything not read, is a
change (docs/extraction.md, "What was appended after a signature").
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from functools import cached_property
from typing import Any

from pipeline.contracts import SignatureAfter

log = logging.getLogger(__name__)

# what signing may change in the catalog, the form dictionary and the document information
CATALOG_SIGNING_KEYS = {"AcroForm", "DSS", "Extensions", "Metadata", "MarkInfo", "Version"}
FORM_SIGNING_KEYS = {"Fields", "DR", "DA", "NeedAppearances", "SigFlags"}
INFO_SIGNING_KEYS = {"ModDate", "Producer"}
HEX_STRING = re.compile(rb"\s*<[0-9A-Fa-f\s]*>\s*")  # the /Contents hole between the signed ranges
PADDING = b" \t\r\n\f\0"
OBJECTS_WALKED = 200_000  # past this many objects in one revision, what changed is not weighed: a change


def after_signature(data: bytes, ranges: list[tuple[int, int]]) -> SignatureAfter:
    """What the file holds beyond the signed byte ``ranges`` ([start, length] pairs):
    "nothing", "signing" (later signatures, timestamps or validation data only) or
    "changes" (anything else, unsigned bytes inside the signed span included)."""
    if len(ranges) != 2 or ranges[0][0] != 0 or not HEX_STRING.fullmatch(data[sum(ranges[0]):ranges[1][0]]):
        return "changes"  # unsigned bytes besides the signature's own value
    end = sum(ranges[1])
    if not data[end:].strip(PADDING):
        return "nothing"
    try:
        return "signing" if _only_signing(_document(data[:end]), _document(data), end) else "changes"
    except Exception as exc:  # pdfminer's errors are many kinds: unread is a change
        log.debug("revisions after a signature not read: %s: %s", type(exc).__name__, exc)
        return "changes"


def _document(data: bytes):
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser

    return PDFDocument(PDFParser(io.BytesIO(data)))


def _defined_after(doc, end: int) -> list[int]:
    """The objects whose newest definition sits past ``end`` (or in an object stream that does)."""
    newest: dict[int, Any] = {}
    for xref in doc.xrefs:  # newest first
        for objid in xref.get_objids():
            newest.setdefault(objid, xref)

    def position(objid: int) -> int:
        stream, index, _ = newest[objid].get_pos(objid)
        return index if stream is None else position(stream)

    return [objid for objid in newest if position(objid) >= end]


def _plain(value: Any) -> Any:
    """A PDF object as comparable Python values, references left unresolved."""
    from pdfminer.pdftypes import PDFObjRef, PDFStream
    from pdfminer.psparser import PSLiteral

    if isinstance(value, PDFObjRef):
        return ("R", value.objid)
    if isinstance(value, PSLiteral):
        return ("/", value.name)
    if isinstance(value, PDFStream):
        return ("stream", _plain(value.attrs), value.get_rawdata())
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _name(value: Any) -> str:
    from pdfminer.psparser import PSLiteral

    return value.name if isinstance(value, PSLiteral) else ""


def _resolve(value: Any) -> Any:
    from pdfminer.pdftypes import resolve1

    return resolve1(value)


def _same_but(old: dict, new: dict, allowed: set[str]) -> bool:
    return all(_plain(old.get(key)) == _plain(new.get(key)) for key in (old.keys() | new.keys()) - allowed)


def _trailer(doc) -> dict:
    return next(t for x in doc.xrefs if (t := x.get_trailer()) and "Root" in t)


def _tree(doc, value: Any) -> set[int]:
    """The objects ``value`` reaches by reference (streams' dictionaries walked, not their data)."""
    from pdfminer.pdftypes import PDFObjRef, PDFObjectNotFound, PDFStream

    found: set[int] = set()
    todo = [value]
    while todo and len(found) < OBJECTS_WALKED:
        item = todo.pop()
        if isinstance(item, PDFObjRef):
            if item.objid in found:
                continue
            found.add(item.objid)
            try:
                item = doc.getobj(item.objid)
            except PDFObjectNotFound:
                continue
        if isinstance(item, PDFStream):
            item = item.attrs
        if isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


def form_fields(doc) -> Iterator[tuple[Any, dict, bool]]:
    """Each node of a document's form field tree (its fields, then their /Kids: fields and
    widgets), as (the reference or inline object, its dictionary, whether it is a signature
    field or under one); each once, for a tree may be circular (pyHanko's
    form-tree-circular-ref-input.pdf)."""
    from pdfminer.pdftypes import PDFObjRef

    todo = [(item, False) for item in _resolve(_resolve(doc.catalog.get("AcroForm") or {}).get("Fields")) or []]
    seen: set[int] = set()
    while todo:
        item, signature = todo.pop()
        if isinstance(item, PDFObjRef):
            if item.objid in seen or len(seen) >= OBJECTS_WALKED:
                continue
            seen.add(item.objid)
        node = _resolve(item)
        if not isinstance(node, dict):
            continue
        signature = signature or _name(_resolve(node.get("FT"))) == "Sig"
        yield item, node, signature
        kids = _resolve(node.get("Kids"))
        todo.extend((kid, signature) for kid in (kids if isinstance(kids, list) else []))


class _Revisions:
    """A signed revision (``old``) and the file as it is now (``new``), read with pdfminer."""

    def __init__(self, old, new) -> None:
        self.old, self.new = old, new
        self._referrers: dict[int, set[tuple[int, str]]] | None = None
        self._trees: dict[str, set[int]] = {}

    @property
    def referrers(self) -> dict[int, set[tuple[int, str]]]:
        """Who refers to each object of the signed revision: (the holder's object number, 0
        for the trailer; the holder's key the reference sits under)."""
        from pdfminer.pdftypes import PDFObjRef, PDFObjectNotFound, PDFStream

        if self._referrers is None:
            self._referrers = {}
            todo: list[tuple[int, Any]] = [(0, _trailer(self.old))]
            seen: set[int] = set()
            while todo:
                holder, value = todo.pop()
                stack: list[tuple[str, Any]] = [("", value)]
                while stack:
                    key, item = stack.pop()
                    if isinstance(item, PDFObjRef):
                        self._referrers.setdefault(item.objid, set()).add((holder, key))
                        if item.objid not in seen:
                            if len(seen) >= OBJECTS_WALKED:
                                raise ValueError(f"more than {OBJECTS_WALKED} objects to weigh")
                            seen.add(item.objid)
                            try:
                                todo.append((item.objid, self.old.getobj(item.objid)))
                            except PDFObjectNotFound:
                                pass
                    elif isinstance(item, PDFStream):
                        stack.append((key, item.attrs))
                    elif isinstance(item, dict):
                        stack.extend((key or name, v) for name, v in item.items())
                    elif isinstance(item, list):
                        stack.extend((key, v) for v in item)
        return self._referrers

    def held_only_by(self, objid: int, allowed) -> bool:
        """Whether every reference to ``objid`` in the signed revision passes ``allowed(holder, key)``."""
        return all(allowed(holder, key) for holder, key in self.referrers.get(objid, ()))

    @cached_property
    def signature_nodes(self) -> set[int]:
        """The signature fields of either revision and their widgets (a field's /Kids: a
        widget need not name its /Parent), as object numbers; read once, for every changed
        object asks."""
        from pdfminer.pdftypes import PDFObjRef

        return {item.objid for doc in (self.old, self.new) for item, _, signature in form_fields(doc)
                if signature and isinstance(item, PDFObjRef)}

    def under(self, key: str) -> set[int]:
        """The objects the catalog's ``key`` reaches in either revision (a DSS, the /Extensions)."""
        if key not in self._trees:
            self._trees[key] = _tree(self.old, self.old.catalog.get(key)) | _tree(self.new, self.new.catalog.get(key))
        return self._trees[key]

    def apart(self, key: str) -> bool:
        """Whether every object under the catalog's ``key`` is referred to from that tree only."""
        root, tree = _trailer(self.old)["Root"].objid, self.under(key)
        return all(self.held_only_by(objid, lambda holder, k: (holder, k) == (root, key) or holder in tree)
                   for objid in tree)


def _grows_by(old: Any, new: Any, signature_nodes: set[int]) -> bool:
    """An array (a form's fields, a page's annotations, a field's kids) that keeps every item
    and adds only signature fields or their widgets."""
    old, new = _resolve(old) or [], _resolve(new) or []
    if not isinstance(old, list) or not isinstance(new, list):
        return False
    kept = [_plain(item) for item in old]
    added = [item for item in new if _plain(item) not in kept]
    return len(new) - len(added) >= len(kept) and all(getattr(item, "objid", None) in signature_nodes
                                                        for item in added)


def _form_signing_only(old: Any, new: Any, signature_nodes: set[int]) -> bool:
    old, new = _resolve(old) or {}, _resolve(new) or {}
    return (isinstance(old, dict) and isinstance(new, dict) and _same_but(old, new, FORM_SIGNING_KEYS)
            and _grows_by(old.get("Fields"), new.get("Fields"), signature_nodes))


def _object_signing_only(objid: int, old: Any, new: Any, revisions: _Revisions) -> bool:
    """Whether one changed object's new definition adds only signatures or validation data."""
    for key in ("DSS", "Extensions"):  # validation data; the extension levels a later signature declares
        if objid in revisions.under(key):
            return revisions.apart(key)
    signatures = revisions.signature_nodes
    if objid in signatures:  # a signature field filled, or its widget drawn: a value once given stays
        return isinstance(new, dict) and not (isinstance(old, dict) and "V" in old
                                              and _plain(old["V"]) != _plain(new.get("V")))
    if isinstance(old, list):
        return _grows_by(old, new, signatures)
    if isinstance(old, dict) and "Fields" in old:  # the form dictionary, held apart from the catalog
        return _form_signing_only(old, new, signatures)
    if isinstance(old, dict) and _name(old.get("Type")) == "Page":
        return (isinstance(new, dict) and _same_but(old, new, {"Annots"})
                and _grows_by(old.get("Annots"), new.get("Annots"), signatures))
    # the appearance of a signature's widget (its /AP, or what that names), redrawn when signed
    return revisions.held_only_by(objid, lambda holder, key: holder in signatures and key == "AP") or (
        revisions.held_only_by(objid, lambda holder, key: key in ("N", "R", "D") and revisions.held_only_by(
            holder, lambda widget, k: widget in signatures and k == "AP")))


def _only_signing(old_doc, new_doc, end: int) -> bool:
    """Whether every object defined after byte ``end`` adds only signatures or validation
    data to the revision ``old_doc`` reads."""
    from pdfminer.pdftypes import PDFObjectNotFound

    changed = _defined_after(new_doc, end)
    if not changed:
        return False  # bytes that define nothing: not a revision any reader agrees on
    revisions = _Revisions(old_doc, new_doc)
    old_trailer, new_trailer = _trailer(old_doc), _trailer(new_doc)
    old_form, new_form = old_doc.catalog.get("AcroForm"), new_doc.catalog.get("AcroForm")
    if not (_same_but(old_doc.catalog, new_doc.catalog, CATALOG_SIGNING_KEYS)
            and _same_but(_resolve(old_trailer.get("Info")) or {}, _resolve(new_trailer.get("Info")) or {},
                          INFO_SIGNING_KEYS)
            and (_plain(old_form) == _plain(new_form)
                 or _form_signing_only(old_form, new_form, revisions.signature_nodes))):
        return False
    # read above as wholes: the catalog, the information dictionary and the XMP metadata
    read = {getattr(t.get(key), "objid", None) for t in (old_trailer, new_trailer) for key in ("Root", "Info")}
    read |= {getattr(d.catalog.get("Metadata"), "objid", None) for d in (old_doc, new_doc)}
    for objid in changed:
        if objid in read:
            continue
        try:
            old = old_doc.getobj(objid)
        except PDFObjectNotFound:
            continue  # a new object: what counts is what refers to it
        new = new_doc.getobj(objid)
        if _plain(old) != _plain(new) and not _object_signing_only(objid, old, new, revisions):
            return False
    return True
