// A key kept by a passkey (CONTRACT section 15, docs/keys.md "A key kept by a passkey"): a discoverable WebAuthn
// credential of this host, asked for its PRF output (the `prf` extension, eval.first = SHA-256 of "referee/key/v1");
// the key's 32-byte Ed25519 seed is HKDF-SHA256 of that output (empty salt, info "referee ed25519 seed v1"). The same
// passkey gives the same output on every device it is synced to, so it brings the same key back; the referee
// receives nothing of it. The key's name rides in the credential's user handle (16 random bytes, then its UTF-8), so
// a browser that brings the key back knows what it was called.

import { _ } from "./i18n.js";

const PRF_LABEL = "referee/key/v1";
const SEED_INFO = "referee ed25519 seed v1";
const HANDLE_RANDOM = 16;
const HANDLE_MAX = 64; // WebAuthn's limit for user.id

/** Thrown when the browser or the authenticator gives no PRF result: the page says so and offers the other ways. */
export class NoPrfError extends Error {
  constructor() {
    super(_("This browser or this passkey gives no PRF result, so it cannot keep a key (Windows Hello and Firefox with a platform passkey do not yet). Move the key by a device link or an encrypted file instead."));
    this.code = "passkey/no_prf";
  }
}

/** Whether this page may ask for passkeys at all (WebAuthn in a secure context: https, or http://localhost). */
export function passkeysAvailable() {
  return Boolean(globalThis.PublicKeyCredential && navigator.credentials && globalThis.isSecureContext && crypto.subtle);
}

async function prfInput() {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(PRF_LABEL)));
}

/** The 32-byte seed of the key a PRF output makes. */
export async function seedOfPrf(prf) {
  const base = await crypto.subtle.importKey("raw", prf, "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0),
    info: new TextEncoder().encode(SEED_INFO) }, base, 256);
  return new Uint8Array(bits);
}

function userHandle(name) {
  const text = new TextEncoder().encode(name);
  const out = new Uint8Array(Math.min(HANDLE_MAX, HANDLE_RANDOM + text.length));
  out.set(crypto.getRandomValues(new Uint8Array(HANDLE_RANDOM)));
  // a name cut at HANDLE_MAX bytes may end inside a character: the decoder below drops what is left of it
  out.set(text.slice(0, out.length - HANDLE_RANDOM), HANDLE_RANDOM);
  return out;
}

function nameOfHandle(handle) {
  if (!handle || handle.byteLength <= HANDLE_RANDOM) return "";
  return new TextDecoder("utf-8", { fatal: false }).decode(new Uint8Array(handle).slice(HANDLE_RANDOM)).replace(/\uFFFD+$/, "");
}

function prfOf(credential) {
  const prf = credential.getClientExtensionResults().prf;
  return prf && prf.results && prf.results.first ? new Uint8Array(prf.results.first) : null;
}

/** Words for what WebAuthn threw: a cancelled prompt is no error of the page's. */
function explained(err) {
  if (err && err.name === "NotAllowedError") {
    const e = new Error(_("The passkey was not used: the prompt was cancelled or timed out."));
    e.code = "passkey/cancelled";
    return e;
  }
  if (err && err.name === "SecurityError") {
    const e = new Error(_("Passkeys need this page at its own name over https (or http://localhost), not at an IP address."));
    e.code = "passkey/insecure";
    return e;
  }
  return err;
}

async function assertion(allow = null) {
  const first = await prfInput();
  const options = { challenge: crypto.getRandomValues(new Uint8Array(32)), rpId: location.hostname,
    userVerification: "required", extensions: { prf: { eval: { first } } } };
  if (allow) options.allowCredentials = [{ type: "public-key", id: allow }];
  try {
    return await navigator.credentials.get({ publicKey: options });
  } catch (err) {
    throw explained(err);
  }
}

/** Make a passkey for `name` and the key it keeps: {name, seed}. Throws NoPrfError where no PRF result comes. */
export async function createPasskeyKey(name) {
  if (!passkeysAvailable()) throw new NoPrfError();
  const first = await prfInput();
  let credential;
  try {
    credential = await navigator.credentials.create({ publicKey: {
      rp: { name: "referee", id: location.hostname },
      user: { id: userHandle(name), name, displayName: name },
      challenge: crypto.getRandomValues(new Uint8Array(32)),
      pubKeyCredParams: [{ type: "public-key", alg: -8 }, { type: "public-key", alg: -7 }, { type: "public-key", alg: -257 }],
      authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
      extensions: { prf: { eval: { first } } },
    } });
  } catch (err) {
    throw explained(err);
  }
  let prf = prfOf(credential);
  if (!prf) {
    // many authenticators only say at creation that they can (prf.enabled); the value comes with an assertion
    const ext = credential.getClientExtensionResults().prf;
    if (!ext || !ext.enabled) throw new NoPrfError();
    prf = prfOf(await assertion(credential.rawId));
  }
  if (!prf) throw new NoPrfError();
  return { name, seed: await seedOfPrf(prf) };
}

/** Bring back the key of a passkey the player chooses (any of this host's): {name, seed}. */
export async function passkeyKey() {
  if (!passkeysAvailable()) throw new NoPrfError();
  const credential = await assertion();
  const prf = prfOf(credential);
  if (!prf) throw new NoPrfError();
  return { name: nameOfHandle(credential.response.userHandle), seed: await seedOfPrf(prf) };
}
