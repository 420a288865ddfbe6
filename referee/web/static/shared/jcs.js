// RFC 8785 (JSON Canonicalization Scheme) for the values the referee signs: objects, arrays, strings,
// booleans, null and integers within ±(2^53 − 1). Floats never occur in envelopes, so they are refused
// rather than risk a number serialisation that differs from the server's.
//
// Object keys are sorted by UTF-16 code units, which is what Array.prototype.sort does by default;
// strings are serialised as JSON.stringify does, which is RFC 8785's string rule (ECMAScript's
// well-formed JSON.stringify).

export function canonicalize(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`);
      return Object.is(value, -0) ? "0" : String(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return "[" + value.map(canonicalize).join(",") + "]";
      const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
      return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalize(value[k])).join(",") + "}";
    }
    default:
      throw new TypeError(`cannot canonicalise a ${typeof value}`);
  }
}

/** The UTF-8 bytes that are signed: RFC 8785 text encoded as UTF-8. */
export function canonicalBytes(value) {
  return new TextEncoder().encode(canonicalize(value));
}
