"""What `fleet dashboard` refuses, over plain HTTP and from the browser: every route without the
right token (401), a state-changing request from another origin or with no Origin (403);
it listens on loopback, and the page loads nothing from anywhere else (it works offline)."""

import re
from types import SimpleNamespace

import pytest

import harness


@pytest.fixture(scope="module")
def server():
    project = harness.Project()
    try:
        proc, url = project.dashboard()
        yield SimpleNamespace(url=url, origin=harness.origin_of(url), token=harness.token_of(url))
    finally:
        project.close()


def test_it_listens_on_loopback_with_a_long_random_token(server):
    assert re.match(r"^http://127\.0\.0\.1:\d+$", server.origin), server.url
    assert len(server.token) >= 32, server.token


ROUTES = [
    "/",
    "/api/sessions",
    "/api/sessions/events",
    "/api/sessions/nope",
    "/api/sessions/nope/events",
    "/api/sessions/nope/agents/main/transcript",
    "/api/sessions/nope/agents/main/transcript/events",
]


def test_get_without_or_with_a_wrong_token_is_401(server):
    wrong = ("0" if server.token[0] != "0" else "1") + server.token[1:]
    for path in ROUTES:
        for query in ("", f"?token={wrong}", "?token="):
            status, body, _ = harness.http("GET", server.origin + path + query)
            assert status == 401, f"GET {path}{query}: {status} {body!r}"
        status, body, _ = harness.http("GET", server.origin + path,
                                       headers={"Authorization": f"Bearer {wrong}"})
        assert status == 401, f"GET {path} with a wrong bearer: {status} {body!r}"
    status, body, _ = harness.http("GET", server.origin + "/api/sessions",
                                   headers={"Authorization": f"Bearer {server.token}"})
    assert status == 200 and body == [], (status, body)


def test_posts_need_the_token_and_the_pages_origin(server):
    posts = [
        ("/api/sessions/nope/tasks/t1/stop", {}),
        ("/api/teams/nope/members/alpha/messages", {"text": "hi", "summary": None}),
        ("/api/sessions/nope/permissions/r1", {"decision": "allow", "message": None}),
    ]
    for path, body in posts:
        status, answer, _ = harness.http("POST", server.origin + path, body=body,
                                         headers={"Origin": server.origin})
        assert status == 401, f"POST {path} without the token: {status} {answer!r}"
        url = f"{server.origin}{path}?token={server.token}"
        for origin in ("http://evil.example", "null", server.origin.replace("127.0.0.1", "localhost"), None):
            headers = {"Origin": origin} if origin else {}
            status, answer, _ = harness.http("POST", url, body=body, headers=headers)
            assert status == 403, f"POST {path} from {origin}: {status} {answer!r}"
            assert isinstance(answer, dict) and answer.get("error"), answer
        # From the page's own origin the request gets through to the route (nothing by that
        # name exists here).
        status, answer, _ = harness.http("POST", url, body=body, headers={"Origin": server.origin})
        assert status not in (401, 403), f"POST {path} from the page's origin: {status} {answer!r}"


def test_no_cross_origin_reads(server):
    status, _, headers = harness.http("GET", f"{server.origin}/api/sessions?token={server.token}",
                                      headers={"Origin": "http://evil.example"})
    assert headers.get("Access-Control-Allow-Origin") in (None, ""), dict(headers)


def test_the_page_loads_nothing_from_elsewhere(server, context):
    page = context.new_page()
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    assert page.goto(server.origin + "/").status == 401
    # With no session the page's first question is the list's event stream.
    with page.expect_request(lambda r: "/api/sessions/events" in r.url):
        response = page.goto(server.url)
    assert response.status == 200
    assert "text/html" in response.headers.get("content-type", "")
    # Only the page's own inline script runs (a nonce per answer), so even markup that got
    # into the page could not run code.
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'nonce-" in policy and "frame-ancestors 'none'" in policy, policy
    page.wait_for_load_state("load")
    others = [u for u in requested if not u.startswith(server.origin + "/")]
    assert others == [], f"requests to other origins: {others}"
    page.close()
