#!/usr/bin/env python3
"""Regenerates tests/data/sigv4/s3-edge-cases/ with botocore's S3 signer (S3SigV4Auth), an
implementation independent of ours. Run with a Python that has botocore:
    python tests/data/sigv4/make_s3_edge_cases.py
Each case is a folder in the layout of the official suite (request.txt, context.json,
header-canonical-request.txt, header-string-to-sign.txt, header-signature.txt). In these cases the
request line's path is percent-encoded ("path_encoded": true in context.json) so that keys with
'?', '#' or spaces survive the request line."""
import datetime
import json
import os
from unittest import mock
from urllib.parse import quote

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

ACCESS, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQ=="
WHEN = datetime.datetime(2015, 8, 30, 12, 36, 0)
HOST = "127.0.0.1:7070"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "s3-edge-cases")


class Recording(botocore.auth.S3SigV4Auth):
    """Keeps the canonical request, string to sign and signature it computed."""

    def canonical_request(self, request):
        self.creq = super().canonical_request(request)
        return self.creq

    def string_to_sign(self, request, canonical_request):
        self.sts = super().string_to_sign(request, canonical_request)
        return self.sts

    def signature(self, string_to_sign, request):
        self.sig = super().signature(string_to_sign, request)
        return self.sig


def case(name, method, key, query="", headers=None, body=b"", token=False, unsigned=False):
    path = "/bucket/" + quote(key, safe="/~") if key is not None else "/bucket"
    url = f"http://{HOST}{path}" + (("?" + query) if query else "")
    headers = dict(headers or {})
    req = AWSRequest(method=method, url=url, headers=headers, data=body)
    if unsigned:  # botocore's S3 signer honours only the explicit client setting
        req.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    creds = Credentials(ACCESS, SECRET, TOKEN if token else None)
    signer = Recording(creds, "s3", "us-east-1")
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=WHEN):
        signer.add_auth(req)
    creq, sts, sig = signer.creq, signer.sts, signer.sig
    assert sig in req.headers["Authorization"]
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    lines = [f"{method} {path}{('?' + query) if query else ''} HTTP/1.1", f"Host:{HOST}"]
    lines += [f"{k}:{v}" for k, v in headers.items()]
    raw = ("\n".join(lines) + "\n").encode()
    if body:
        raw += b"\n" + body
    with open(os.path.join(d, "request.txt"), "wb") as f:
        f.write(raw)
    ctx = {
        "credentials": {"access_key_id": ACCESS, "secret_access_key": SECRET},
        "region": "us-east-1", "service": "s3", "timestamp": "2015-08-30T12:36:00Z",
        "sign_body": not unsigned, "unsigned_payload": unsigned, "path_encoded": True,
    }
    if token:
        ctx["credentials"]["token"] = TOKEN
    with open(os.path.join(d, "context.json"), "w") as f:
        json.dump(ctx, f, indent=4)
    for fn, text in (("header-canonical-request.txt", creq), ("header-string-to-sign.txt", sts),
                     ("header-signature.txt", sig)):
        with open(os.path.join(d, fn), "w") as f:
            f.write(text)


case("put-key-space-plus-equals-colon", "PUT", "dir/a b+c=d:e.bin", body=b"hello")
case("put-key-utf8", "PUT", "dir/\u00fcn\u00efcode-\u1234.bin", body=b"x")
case("put-key-reserved", "PUT", "k!'()*$&,;@[]#?.bin", body=b"y")
case("put-key-percent", "PUT", "100%/a%20b", body=b"z")
case("get-key-unnormalized", "GET", "a//b/./c/../d")
case("put-unsigned-payload", "PUT", "unsigned.bin", body=b"data", unsigned=True)
case("get-session-token", "GET", "secure/obj", token=True)
case("get-range", "GET", "ranged.bin", headers={"Range": "bytes=10-19"})
case("head-object", "HEAD", "dir/obj")
case("delete-object", "DELETE", "dir/obj")
case("put-if-none-match", "PUT", "lock", headers={"If-None-Match": "*"}, body=b"")
case("list-objects-v2", "GET", None,
     "list-type=2&prefix=dir%2F&delimiter=%2F&max-keys=2&start-after=dir%2Fa%20b"
     "&continuation-token=1%2B2%3D3%2F")
case("multipart-create", "POST", "big.bin", "uploads")
case("multipart-upload-part", "PUT", "big.bin", "partNumber=1&uploadId=2~abc.DEF-_x", body=b"p" * 64)
case("multipart-complete", "POST", "big.bin", "uploadId=2~abc.DEF-_x",
     body=b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"e\"</ETag></Part>"
          b"</CompleteMultipartUpload>")
case("multipart-abort", "DELETE", "big.bin", "uploadId=2~abc.DEF-_x")
