"""Device links (CONTRACT section 15): a key carried from one device to another in a sealed box.

``POST /keys/links`` keeps a box for ``REFEREE_DEVICE_LINK_SECONDS`` and answers its link; ``GET
/keys/links/{link}`` gives the box out once and forgets it; ``GET /keys/links/{link}/status`` says whether it was
taken, until it expires. The box is sealed under a secret that only the link's ``#fragment`` carries: the referee
keeps bytes it cannot open (``docs/keys.md``, "Device links").
"""

from __future__ import annotations

import re
from typing import Any

from flask import current_app
from flask.views import MethodView

from referee.errors import ServiceError
from referee.i18n import Text
from referee.protocol.signing import b64url_decode
from referee.store.device_links import LINK_ID_PATTERN
from schemas.common import ErrorSchema
from schemas.device_links import (
    BOX_MAX_BYTES,
    DeviceLinkBoxSchema,
    DeviceLinkRequestSchema,
    DeviceLinkSchema,
    DeviceLinkStatusSchema,
)

from .limits import rate_limited
from .parsing import ApiBlueprint

blp = ApiBlueprint("device links", __name__, url_prefix="/keys/links",
                   description="A key moved between two devices in a sealed box, given out once (section 15)")

_LINK = re.compile(LINK_ID_PATTERN)


@blp.after_request
def _no_store(response: Any) -> Any:
    """A box, a link or its status is nobody's to keep: not a cache's, not the browser's."""
    response.headers["Cache-Control"] = "no-store"
    return response


def links() -> Any:
    return current_app.extensions["referee.device_links"]


def gone(link: str) -> ServiceError:
    return ServiceError(404, "link/gone", Text("the device link is gone: it was used, it expired, or it never was"),
                        details={"link": link})


def _checked(link: str) -> str:
    if not _LINK.fullmatch(link):
        raise gone(link)
    return link


@blp.route("")
class DeviceLinks(MethodView):
    @rate_limited("REFEREE_RATE_DEVICE_LINKS")
    @blp.arguments(DeviceLinkRequestSchema())
    @blp.response(201, DeviceLinkSchema)
    @blp.alt_response(400, schema=ErrorSchema, description="the box is not base64url, or too short")
    @blp.alt_response(413, schema=ErrorSchema, description="the box is larger than 2 KiB decoded (link/too_large)")
    @blp.alt_response(429, schema=ErrorSchema, description="too many links made from this address")
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """Keep a sealed box for a few minutes (``REFEREE_DEVICE_LINK_SECONDS``, default 600); the answer names
        the link (``/play/link/<link>#<secret>``) and when it expires."""
        size = len(b64url_decode(body["box"]))
        if size > BOX_MAX_BYTES:
            raise ServiceError(413, "link/too_large",
                               Text("the box is %(size)s bytes; a device link carries at most %(limit)s",
                                    size=size, limit=BOX_MAX_BYTES),
                               details={"size": size, "limit": BOX_MAX_BYTES})
        link, expires = links().put(body["box"])
        return {"link": link, "expires": expires}


@blp.route("/<link>")
class DeviceLink(MethodView):
    @blp.response(200, DeviceLinkBoxSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="link/gone: taken already, expired, or unknown")
    def get(self, link: str) -> dict[str, Any]:
        """The sealed box, once: the link is gone after this answer."""
        box = links().take(_checked(link))
        if box is None:
            raise gone(link)
        return {"box": box}


@blp.route("/<link>/status")
class DeviceLinkStatus(MethodView):
    @blp.response(200, DeviceLinkStatusSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="link/gone: expired or unknown")
    def get(self, link: str) -> dict[str, Any]:
        """Whether the box was taken (until the link expires): the first device says so."""
        status = links().status(_checked(link))
        if status is None:
            raise gone(link)
        return {"taken": status.taken, "expires": status.expires}
