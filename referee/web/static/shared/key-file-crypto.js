// The passphrase-encrypted key file, the same format as the command line's (docs/keys.md), with Web Crypto:
//
//   {"format": "referee-key", "version": 1, "kdf": "PBKDF2-HMAC-SHA256", "iterations": 600000,
//    "salt": b64url(16 bytes), "cipher": "AES-256-GCM", "iv": b64url(12 bytes),
//    "ciphertext": b64url(AES-GCM(seed) || 16-byte tag), "public": b64url(32 bytes), "name": "..."}
//
// AES key = PBKDF2-HMAC-SHA256(UTF-8 of the passphrase's NFC form, salt, iterations, 256 bits);
// additional authenticated data = the ASCII of "public".

import * as b64 from "./b64url.js";
import { _ } from "./i18n.js";
// the constants come from referee/protocol/keyfile.py (FORMAT_CONSTANTS), served by the pages: one source for both
import {
  CIPHER, DEFAULT_ITERATIONS, FORMAT, IV_BYTES, KDF, MAX_ITERATIONS, MIN_ITERATIONS, SALT_BYTES, VERSION,
} from "./keyfile-format.js";

export { CIPHER, DEFAULT_ITERATIONS, FORMAT, KDF, MAX_ITERATIONS, MIN_ITERATIONS, VERSION };

async function aesKey(passphrase, salt, iterations) {
  const raw = new TextEncoder().encode(String(passphrase).normalize("NFC"));
  const base = await crypto.subtle.importKey("raw", raw, "PBKDF2", false, ["deriveKey"]);
  return crypto.subtle.deriveKey({ name: "PBKDF2", salt, iterations, hash: "SHA-256" }, base,
    { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
}

/** The text of an encrypted key file for a stored key ({name, public, private}). */
export async function encryptKeyFile(entry, passphrase, { iterations = DEFAULT_ITERATIONS } = {}) {
  if (!passphrase) throw new Error(_("an empty passphrase encrypts nothing"));
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const key = await aesKey(passphrase, salt, iterations);
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(entry.public) },
    key, b64.decode(entry.private));
  const doc = { format: FORMAT, version: VERSION, kdf: KDF, iterations, salt: b64.encode(salt), cipher: CIPHER,
    iv: b64.encode(iv), ciphertext: b64.encode(new Uint8Array(sealed)), public: entry.public };
  if (entry.name) doc.name = entry.name;
  return JSON.stringify(doc, null, 2) + "\n";
}

/** Whether `doc` (parsed JSON) claims to be an encrypted key file. */
export function isKeyFile(doc) {
  return Boolean(doc && typeof doc === "object" && doc.format === FORMAT);
}

function field(doc, name, size) {
  let raw;
  try {
    raw = b64.decode(doc[name] ?? "");
  } catch {
    throw new Error(`${name} is not base64url`);
  }
  if (size !== undefined && raw.length !== size) throw new Error(`${name} must be ${size} bytes, not ${raw.length}`);
  return raw;
}

/** The checked header (the same checks as referee/protocol/keyfile.py); throws naming the problem. */
export function parseKeyFile(doc) {
  if (!isKeyFile(doc)) throw new Error(`not an encrypted key file ("format" is not "${FORMAT}")`);
  if (doc.version !== VERSION) throw new Error(`key file version ${JSON.stringify(doc.version)} is not supported (this reads ${VERSION})`);
  if (doc.kdf !== KDF || doc.cipher !== CIPHER) throw new Error(`only kdf ${KDF} with cipher ${CIPHER} is supported`);
  if (!Number.isInteger(doc.iterations) || doc.iterations < MIN_ITERATIONS || doc.iterations > MAX_ITERATIONS) {
    throw new Error(`iterations must be an integer between ${MIN_ITERATIONS} and ${MAX_ITERATIONS}`);
  }
  if (field(doc, "salt").length < SALT_BYTES) throw new Error(`salt must be at least ${SALT_BYTES} bytes`);
  field(doc, "iv", IV_BYTES);
  field(doc, "ciphertext", 48);
  field(doc, "public", 32);
  if (doc.name !== undefined && typeof doc.name !== "string") throw new Error("name must be a string");
  return doc;
}

/** {seed, public, name} of an encrypted key file; throws on a wrong passphrase or an altered file. */
export async function decryptKeyFile(doc, passphrase) {
  parseKeyFile(doc);
  if (!passphrase) throw new Error(_("this key file is encrypted: enter its passphrase"));
  const key = await aesKey(passphrase, field(doc, "salt"), doc.iterations);
  let seed;
  try {
    seed = new Uint8Array(await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: field(doc, "iv", IV_BYTES), additionalData: new TextEncoder().encode(doc.public) },
      key, field(doc, "ciphertext", 48)));
  } catch {
    throw new Error(_("wrong passphrase (or the file was altered)"));
  }
  return { seed, public: doc.public, name: doc.name };
}
