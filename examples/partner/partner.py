#!/usr/bin/env python3
"""A partner's day, from its credentials to a finished planning (docs/partners.md), in Python with the standard
library only: `python3 examples/partner/partner.py` against `npm start`.

With PARTNER_CLIENT_KEY, PARTNER_SECRET_KEY and PARTNER_ORG_ID set it acts on those partner credentials alone: it
never signs in as the SysAdmin. Without them (local mode) it first plays the platform's SysAdmin to make an
organisation and a partner of it with every scope (T3), as the platform would hand you your keys. Its drivers are
people with phones; locally the script plays them too (the mail outbox, a location, an answer to each offer).
"""
import base64
import json
import os
import random
import string
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone

URL = os.environ.get("DISPATCH_URL", "http://localhost:3000")
TAG = "".join(random.choices(string.ascii_lowercase + string.digits, k=5))


class Refused(Exception):
    """The service refused a call; `detail` says why (contract section 2)."""


def call(method, path, token=None, body=None, headers=None):
    request = urllib.request.Request(URL + path, method=method)
    if token:
        request.add_header("authorization", "Bearer " + token)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, data, timeout=30) as response:
            text = response.read().decode()
    except urllib.error.HTTPError as error:
        problem = error.read().decode()
        detail = json.loads(problem).get("detail", problem) if problem.startswith("{") else problem
        raise Refused(f"{method} {path} -> {error.code}: {detail}") from None
    return json.loads(text) if text else {}


def step(text):
    print("• " + text, flush=True)


def now():
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def until(read, done, what):
    for _ in range(150):
        value = read()
        if done(value):
            return value
        time.sleep(0.2)
    raise RuntimeError("gave up waiting for " + what)


# ----- 0. Local mode only (no keys given): the platform makes the organisation and its partner (T3) -----
client_key = os.environ.get("PARTNER_CLIENT_KEY")
secret_key = os.environ.get("PARTNER_SECRET_KEY")
org_id = os.environ.get("PARTNER_ORG_ID", "")
if not client_key or not secret_key:
    admin_email = os.environ.get("DISPATCH_ADMIN_EMAIL") or "admin@dispatch.local"
    admin_password = os.environ.get("DISPATCH_ADMIN_PASSWORD") or "admin-password-change-me"
    login = {"user": {"email": admin_email, "password": admin_password}}
    admin = call("POST", "/v1/auth/login", body=login)["bearer_token"]
    org_id = call("POST", "/v1/admin/organisations", admin, {"name": "Partnered " + TAG, "kind": "transporter"})["id"]
    partner = call(
        "POST",
        "/v1/admin/partner-authorizations",
        admin,
        {
            "name": "Partner " + TAG,
            "webhook_url": "https://hooks.example.com/dispatch",
            "org_id": org_id,
            "scopes": ["users:invite", "imports", "plannings", "locations:read"],
        },
    )
    client_key, secret_key = partner["client_key"], partner["secret_key"]
    step(f"T3: partner {partner['id']} of organisation {org_id} with scopes {', '.join(partner['scopes'])}")
elif not org_id:
    raise SystemExit("PARTNER_ORG_ID is needed with PARTNER_CLIENT_KEY: the organisation your partner acts for (T3)")
else:
    step(f"T3: partner of organisation {org_id} from PARTNER_CLIENT_KEY (no SysAdmin)")

# ----- 1. X5: a bearer token from the client credentials (an hour; ask again when it expires) -----
basic = base64.b64encode(f"{client_key}:{secret_key}".encode()).decode()
token = call(
    "POST", "/v1/auth/token", body={"grant_type": "client_credentials"}, headers={"authorization": "Basic " + basic}
)["bearer_token"]
step("X5: partner token issued")

# ----- 2. A9: invite the drivers (X4 read with the partner's own token; locally the script accepts for them) -----
driver_role = next(r for r in call("GET", "/v1/roles", token)["roles"] if r["name"] == "OrgDriver")
drivers = []
for i in range(3):
    email = f"driver{i}.{TAG}@partner.example"
    call("POST", "/v1/partner/invitations", token, {"user": {"email": email, "org_id": org_id, "role_id": driver_role["id"]}})
    outbox = call("GET", "/_local/outbox?to=" + urllib.parse.quote(email))
    invitation_token = outbox["messages"][0]["data"]["invitation_token"]
    password = "a-good-long-password"
    call(
        "POST",
        "/v1/auth/accept-invitation",
        body={"user": {"name": f"Driver {i}", "password": password, "invitation_token": invitation_token}},
    )
    session = call("POST", "/v1/auth/login", body={"user": {"email": email, "password": password}})
    fix = {"latitude": 1.3 + i * 0.002, "longitude": 103.85, "client_time_utc": now()}
    call("PUT", "/v1/driver/location", session["bearer_token"], fix)
    drivers.append({"id": session["user"]["id"], "token": session["bearer_token"]})
step(f"A9: {len(drivers)} drivers invited; they joined and sent their positions")

# ----- 3. Imports: upload a CSV through its presigned URL (I1), make the job (I4b), start it (I6), read the result -----
header = (
    "task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,"
    "from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude"
)
rows = [
    f"P-{i + 1},{10 + i} Anson Rd,Singapore,SG,{20 + i} Collyer Quay,Singapore,SG,2026-12-01T00:00:00Z,"
    f"2026-12-01T02:00:00Z,Asia/Singapore,2026-12-01T03:00:00Z,2026-12-01T05:00:00Z,Asia/Singapore,{1.3 + i * 0.002},103.851"
    for i in range(3)
]
upload = call("GET", "/v1/task-import-jobs/upload-url?filename=tasks.csv", token)["file"]
put = urllib.request.Request(upload["url"], data=("\n".join([header, *rows]) + "\n").encode(), method="PUT")
put.add_header("content-type", "text/csv")  # the presigned URL signs this type
urllib.request.urlopen(put, timeout=30).read()
job = call(
    "POST",
    "/v1/task-import-jobs",
    token,
    {
        "files": [{"storage_upload_key": upload["storage_upload_key"]}],
        "start_timezone": "Asia/Singapore",
        "start_time": "2026-12-01T08:00:00+08:00",
        "end_timezone": "Asia/Singapore",
        "end_time": "2026-12-01T20:00:00+08:00",
        "service_type": "van_1.7m",  # the vehicle these tasks need (docs/imports.md)
    },
)
call("POST", f"/v1/task-import-jobs/{job['id']}/start", token)
until(
    lambda: call("GET", f"/v1/task-import-jobs/{job['id']}/status", token),
    lambda s: s["import_status"] in ("completed", "failed"),
    "the import",
)
result = call("GET", f"/v1/task-import-jobs/{job['id']}/result", token)
if result["errors"]:
    raise RuntimeError("rows rejected: " + "; ".join(result["errors"]))
step(f"imports: {result['total_tasks_imported']} tasks imported (I1, I4b, I6, I9, I7)")

# ----- 4. A planning of those tasks (P2, P5 with task_ids, P7), its job (P9) offering them to the drivers -----
tasks = call("GET", f"/v1/tasks?import_job_id={job['id']}&order=asc", token)["tasks"]
planning = call("POST", "/v1/plannings", token, {"name": "Partner run " + TAG})
runsheets = [{"id": "RS-" + t["task_ref"], "name": "Run " + t["task_ref"], "task_ids": [t["id"]]} for t in tasks]
call("POST", f"/v1/plannings/{planning['id']}/runsheets", token, {"runsheets": runsheets})
ready = call("POST", f"/v1/plannings/{planning['id']}/drivers", token, {"drivers": [{"id": d["id"]} for d in drivers]})
call(
    "POST",
    f"/v1/plannings/{planning['id']}/job",
    token,
    {"version_rev": ready["version_rev"], "max_candidates": 3, "offer_ttl_s": 600},
)
status = until(
    lambda: call("GET", f"/v1/plannings/{planning['id']}/job/status", token),
    lambda s: s["current_status"] not in ("queued", "processing"),
    "the planning job",
)
step(f"planning {planning['id']}: {len(tasks)} runsheets, {len(drivers)} drivers; job {status['current_status']}")

# ----- 5. The drivers answer (locally played here): each takes the first offer it can still win -----
for driver in drivers:
    for offer in call("GET", "/v1/driver/offers", driver["token"])["offers"]:
        path = f"/v1/broadcast-plans/{offer['plan']['id']}/pairs/{offer['id']}/accepted"
        try:
            call("POST", path, driver["token"], {"happened_at_utc": now()})
            break
        except Refused:
            continue  # 409: another driver won that runsheet first

# ----- 6. The finished planning as the partner reads it (X14): every runsheet with its driver -----
listed = call("GET", f"/v1/plannings/{planning['id']}/runsheets", token)["runsheets"]
for r in listed:
    driver = f" to {r['assigned_driver']['name']}" if r.get("assigned_driver") else ""
    step(f"{r['id']}: {r['status']}{driver}")
assigned = sum(1 for r in listed if r["status"] == "assigned")
print(json.dumps({"planning_id": planning["id"], "runsheets": len(listed), "assigned": assigned}))
sys.exit(0 if assigned == len(listed) else 1)
