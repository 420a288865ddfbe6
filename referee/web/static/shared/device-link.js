// Device links (CONTRACT section 15, docs/keys.md "Device links"): a key sealed for one trip to another device.
// The box is a random 12-byte nonce, then AES-256-GCM (no additional data) of the RFC 8785 bytes of
// {"v": 1, "name", "private"}, under HKDF-SHA256 of a 32-byte secret (empty salt, info "referee device link v1").
// The referee keeps the box for a few minutes and gives it out once; the secret is only in the link's #fragment.

import * as b64 from "./b64url.js";
import { canonicalBytes } from "./jcs.js";
import { _ } from "./i18n.js";

const INFO = "referee device link v1";
const NONCE = 12;

async function aesKey(secret) {
  const base = await crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0),
    info: new TextEncoder().encode(INFO) }, base, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
}

/** Seal a stored key ({name, private}): {box, secret}, both base64url. */
export async function sealKey(entry) {
  const secret = crypto.getRandomValues(new Uint8Array(32));
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE));
  const plain = canonicalBytes({ v: 1, name: entry.name, private: entry.private });
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce }, await aesKey(secret), plain));
  const box = new Uint8Array(NONCE + sealed.length);
  box.set(nonce);
  box.set(sealed, NONCE);
  return { box: b64.encode(box), secret: b64.encode(secret) };
}

/** Open a box with the link's secret: {name, private} (the seed, base64url). */
export async function openBox(boxText, secretText) {
  let secret;
  try {
    secret = b64.decode(secretText);
  } catch {
    secret = new Uint8Array(0);
  }
  if (secret.length !== 32) throw new Error(_("The link has no whole secret after its #: copy the whole link."));
  const box = b64.decode(boxText);
  let plain;
  try {
    plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: box.slice(0, NONCE) }, await aesKey(secret), box.slice(NONCE));
  } catch {
    throw new Error(_("The key could not be opened with this link's secret: was the link copied whole?"));
  }
  const doc = JSON.parse(new TextDecoder().decode(plain));
  if (doc.v !== 1 || typeof doc.private !== "string") throw new Error(_("The link holds no key this page can read."));
  return { name: String(doc.name || ""), private: doc.private };
}

/** The link's page on this referee: /play/link/<link>#<secret>. */
export function linkUrl(web, link, secret) {
  return new URL(`${web}link/${encodeURIComponent(link)}#${secret}`, location.href).href;
}
