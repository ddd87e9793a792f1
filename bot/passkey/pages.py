"""The two pages, as plain HTML: the call first, one button, readable on a phone. Every
value is escaped; the WebAuthn options travel as JSON in a non-executed script element,
and the one inline script runs under a per-page nonce (Content-Security-Policy)."""

from __future__ import annotations

import html
import json
from typing import Any

from bot.passkey import messages as msg

_STYLE = (
    "body{font:16px/1.45 system-ui,sans-serif;max-width:40rem;margin:1rem auto;padding:0 1rem}"
    "dt{font-weight:600;margin-top:.6rem}dd{margin:0;word-break:break-all}"
    "pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.5rem}"
    "button{font-size:1.1rem;padding:.8rem 1.2rem;width:100%;margin-top:1rem}"
    "#result{font-weight:600}.ok{color:#116611}.no{color:#aa1111}"
)

# Base64url <-> bytes for the WebAuthn options and answers (the library's JSON shape).
_SCRIPT = """
const b64u = s => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') +
  '='.repeat((4 - s.length % 4) % 4)), c => c.charCodeAt(0));
const enc = b => btoa(String.fromCharCode(...new Uint8Array(b)))
  .replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '');
const options = JSON.parse(document.getElementById('options').textContent);
const says = JSON.parse(document.getElementById('says').textContent);
const ids = list => (list || []).map(c => ({...c, id: b64u(c.id)}));
async function hitlAnswer() {
  const o = {...options, challenge: b64u(options.challenge)};
  let c;
  if (o.user) {
    o.user = {...o.user, id: b64u(o.user.id)};
    o.excludeCredentials = ids(o.excludeCredentials);
    c = await navigator.credentials.create({publicKey: o});
  } else {
    o.allowCredentials = ids(o.allowCredentials);
    c = await navigator.credentials.get({publicKey: o});
  }
  const r = {clientDataJSON: enc(c.response.clientDataJSON)};
  for (const k of ['attestationObject', 'authenticatorData', 'signature', 'userHandle']) {
    if (c.response[k]) r[k] = enc(c.response[k]);
  }
  if (c.response.getTransports) r.transports = c.response.getTransports();
  return {id: c.id, rawId: enc(c.rawId), type: c.type, response: r,
          clientExtensionResults: c.getClientExtensionResults(),
          authenticatorAttachment: c.authenticatorAttachment};
}
window.hitlAnswer = hitlAnswer;
const out = document.getElementById('result');
const show = (text, ok) => { out.textContent = text; out.className = ok ? 'ok' : 'no'; };
document.getElementById('go').addEventListener('click', async () => {
  const button = document.getElementById('go');
  if (!window.PublicKeyCredential) { show(says.none, false); return; }
  button.disabled = true;
  show(says.working, true);
  let body;
  try { body = await hitlAnswer(); }
  catch (e) {
    show(says.refused + ' (' + e.name + ')', false);
    button.disabled = false;
    return;
  }
  const r = await fetch(location.pathname, {method: 'POST', body: JSON.stringify(body),
    headers: {'content-type': 'application/json'}});
  const j = await r.json();
  show(j.message, j.ok);
});
"""


def _json(value: Any) -> str:
    # Inside <script type="application/json">: "</script>" must never appear in it.
    return json.dumps(value).replace("<", "\\u003c")


def page(title: str, body: str, *, nonce: str, options: str | None = None) -> str:
    """A whole page; with `options` (the WebAuthn JSON), the button and its script."""
    says = {"none": msg.NO_WEBAUTHN, "working": msg.WORKING, "refused": msg.BROWSER_REFUSED}
    tail = ""
    if options is not None:
        tail = (
            f'<script type="application/json" id="options">{_json(json.loads(options))}</script>'
            f'<script type="application/json" id="says">{_json(says)}</script>'
            f'<script nonce="{nonce}">{_SCRIPT}</script>'
        )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<title>{html.escape(title)}</title><style nonce="{nonce}">{_STYLE}</style></head>'
        f"<body><h1>{html.escape(title)}</h1>{body}"
        '<p id="result" role="status"></p>'
        f"{tail}</body></html>"
    )


def message(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


def button(label: str) -> str:
    return f'<button id="go" type="button">{html.escape(label)}</button>'


def call_details(rows: list[tuple[str, str, bool]]) -> str:
    """The call as a list of (label, value, preformatted) rows."""
    items = []
    for label, value, pre in rows:
        shown = f"<pre>{html.escape(value)}</pre>" if pre else html.escape(value)
        items.append(f"<dt>{html.escape(label)}</dt><dd>{shown}</dd>")
    return "<dl>" + "".join(items) + "</dl>"
