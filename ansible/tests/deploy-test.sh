#!/usr/bin/env bash
# The real deployment test: deploys Warden on this machine with the Ansible playbooks and uses it: a default cell
# (3 ZooKeeper servers), a second cell b (1 server, serving the namespace pay) and 2 gateways.
#
#   bash ansible/tests/deploy-test.sh      (from anywhere; needs `mvn package` built first, see below)
#
# Inventory inventory/ci: connection local, loopback addresses, a directory per "host" under a sandbox, warden-supervise
# instead of systemd. Steps:
#   1. ansible-lint on ansible/ (strict: a warning fails too)
#   1b. render check (tests/render-check.yml): warden.yaml rendered for both gateways with every ZooKeeper TLS/SASL
#      variable set has the zk-tls-*/zk-sasl-*/zk-acl keys with the installed files' paths and the servers' secure
#      ports in zk: and cells:, routes:, no password in it or in the output; the role's checks refuse the wrong
#      combinations, and wrong cells and routes
#   2. site.yml deploys a 3-server ZooKeeper ensemble, cell b's 1-server ensemble and 2 gateways
#   3. smoke: a session and the lock ci/smoke through gateway 1; gateway 2 sees the same holder, session and token
#   3b. cells: `warden cells --json` through gateway 1 lists default and b, both serving, b with the namespace pay;
#      pay/smoke acquired through gateway 1 is held with the same token through gateway 2, and its queue entry is
#      in cell b's ZooKeeper (its czxid the token; read with the distribution's ZooKeeper client), not in the
#      default cell's; released, the entry is gone
#   4. `warden lock ci/held` holds a lock across a rolling restart of the gateways (warden.yml
#      -e warden_rolling_restart=true): same session, same token, the CLI never lost it
#   4b. the same lock, still held, across a rolling restart of the ZooKeeper ensembles (zookeeper.yml
#      -e zookeeper_rolling_restart=true): every server of both cells runs as a new process, the default cell's
#      leader was restarted after its followers, exactly one leader afterwards; same session, same token through
#      both gateways, the CLI never lost it; both cells serve again (`warden cells`); then it ends and the lock is free
#   5. site.yml again: the PLAY RECAP shows changed=0 for every host
#   5b. warden.yml with warden_principals (a token from extra vars): auth.yaml holds only its SHA-256, the token is in
#      no output, each gateway (restarted one at a time for its new config) answers 401 without it and 201 with it
#   6. teardown.yml stops everything, cell b's server too; no process of the sandbox is left
#   7. a secured cell (inventory/ci-secure): certificates and secrets made here (openssl, keytool), one ZooKeeper
#      server with TLS (mutual) and SASL enforced, one gateway with warden_zk_tls_* and warden_zk_sasl_*: it becomes
#      ready over TLS+SASL and serves a lock; its files, modes and warden.yaml are as documented; no password in the
#      output or the config file; then teardown.yml
# On any failure: a message naming the step, the end of the relevant log, exit status 1. On exit (success or not)
# everything the test started is stopped and the sandbox is deleted (KEEP_SANDBOX=1 keeps it for a look).
#
# Artifacts (defaults: the standard build directories of this checkout):
#   WARDEN_JAR      service/target/warden-service.jar         (mvn -DskipTests package -pl service -am)
#   WARDEN_CLI_JAR  cli/target/warden-cli.jar                 (mvn -DskipTests package -pl cli -am)
#   ZK_DIST         zk-config/target/warden-zookeeper-3.9.5.tar.gz   (mvn -DskipTests package -pl zk-config -am)
#   ZK_CONF         zk-config/conf
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ANSIBLE_DIR="$REPO/ansible"
WARDEN_JAR="${WARDEN_JAR:-$REPO/service/target/warden-service.jar}"
WARDEN_CLI_JAR="${WARDEN_CLI_JAR:-$REPO/cli/target/warden-cli.jar}"
ZK_DIST="${ZK_DIST:-$REPO/zk-config/target/warden-zookeeper-3.9.5.tar.gz}"
ZK_CONF="${ZK_CONF:-$REPO/zk-config/conf}"
GW1=http://127.0.0.1:27070
GW2=http://127.0.0.1:27071
GW_SECURE=http://127.0.0.1:27072
# The ports inventory/ci uses: ZooKeeper client, quorum, election, admin, metrics; the gateways; cell b's server
# (client, quorum, election, admin, metrics). Then those of inventory/ci-secure (step 7): client, secure client,
# quorum, election, admin, metrics, the gateway.
PORTS=(22181 22182 22183 22888 22889 22890 23888 23889 23890 28081 28082 28083 27001 27002 27003 27070 27071
       22185 22892 23892 28085 27005
       22184 22284 22891 23891 28084 27004 27072)
# Cell b's ZooKeeper server (inventory/ci, group zookeeper_b): its client and admin ports.
CELL_B_ZK=22185
CELL_B_ADMIN=28085

export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 NO_COLOR=1 PY_COLORS=0 ANSIBLE_DEPRECATION_WARNINGS=0
export ANSIBLE_LOCALHOST_WARNING=0
# Every address the test uses is on loopback: never through a proxy.
export no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}" NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}"

SANDBOX=""
LOGS=""
CLI_PID=""
STEP="start"
T0=$SECONDS
STEP_T0=$SECONDS
TIMINGS=()

step() {
  STEP_T0=$SECONDS
  STEP="$1"
  echo
  echo "== deploy-test: $STEP"
}
done_step() {
  TIMINGS+=("$(printf '%4ds  %s' $((SECONDS - STEP_T0)) "$STEP")")
}
fail() {
  echo "== deploy-test: FAILED at step '$STEP': $*" >&2
  exit 1
}
# Shows the end of a log file, indented.
show() { echo "---- end of $1:"; tail -n "${2:-60}" "$1" | sed 's/^/    /'; echo "----"; }

cleanup() {
  local status=$?
  set +e
  if [ -n "$CLI_PID" ] && kill -0 "$CLI_PID" 2>/dev/null; then
    kill -TERM "$CLI_PID" 2>/dev/null
    wait "$CLI_PID" 2>/dev/null
  fi
  if [ -n "$SANDBOX" ] && [ -d "$SANDBOX" ]; then
    # Stop what the playbooks started, gateways first: each pid file's process, by the supervisor that started it.
    local pidfile supervise
    for pidfile in "$SANDBOX"/gw*/run/warden/warden.pid "$SANDBOX"/secure/gw*/run/warden/warden.pid \
                   "$SANDBOX"/zk*/run/zookeeper/zookeeper.pid "$SANDBOX"/secure/zk*/run/zookeeper/zookeeper.pid; do
      [ -f "$pidfile" ] || continue
      supervise="${pidfile%/run/*}/usr/local/bin/warden-supervise"
      "$supervise" stop "$pidfile" 10 >/dev/null 2>&1
    done
    # Anything else still running from the sandbox (its command line names a file in it).
    local left
    left="$(pgrep -f -- "$SANDBOX/" || true)"
    if [ -n "$left" ]; then
      echo "== deploy-test: killing leftover processes of the sandbox: $left" >&2
      # shellcheck disable=SC2086
      kill -KILL $left 2>/dev/null
    fi
    if [ "$status" -ne 0 ] && [ -n "$LOGS" ]; then
      for log in "$SANDBOX"/gw*/var/log/warden/warden.log "$SANDBOX"/zk*/var/log/zookeeper/zookeeper.out \
                 "$SANDBOX"/secure/gw*/var/log/warden/warden.log "$SANDBOX"/secure/zk*/var/log/zookeeper/zookeeper.out \
                 "$LOGS/cli.log"; do
        [ -s "$log" ] && show "$log" 30
      done
    fi
    if [ "${KEEP_SANDBOX:-0}" = 1 ]; then
      echo "== deploy-test: sandbox kept at $SANDBOX"
    else
      rm -rf "$SANDBOX"
    fi
  fi
  if [ "$status" -eq 0 ] && [ "$COMPLETED" = 1 ]; then
    echo
    echo "== deploy-test: timings"
    printf '  %s\n' "${TIMINGS[@]}"
    echo "== deploy-test: passed in $((SECONDS - T0)) s"
  else
    [ "$status" -ne 0 ] || status="not finished"
    echo "== deploy-test: failed (exit $status) at step '$STEP' after $((SECONDS - T0)) s" >&2
  fi
}
# Passed only when the last step is done: a script stopped by a signal runs the EXIT trap too, with status 0.
COMPLETED=0
trap cleanup EXIT

# ---- helpers -------------------------------------------------------------------------------------------------------
# Runs ansible-playbook in ansible/ with the CI inventory, the sandbox and the artifacts; output to a log file.
# INVENTORY and DEPLOY_ROOT (default inventory/ci and the sandbox) name another cell (step 7).
playbook() {
  local log="$LOGS/$1" rc=0 inventory="${INVENTORY:-inventory/ci}" root="${DEPLOY_ROOT:-$SANDBOX}"
  shift
  echo "\$ cd ansible && ansible-playbook -i $inventory $* -e deploy_root=$root${ARTIFACT_VARS_TEXT}"
  (cd "$ANSIBLE_DIR" && ansible-playbook -i "$inventory" "$@" -e "deploy_root=$root" "${ARTIFACT_VARS[@]}") >"$log" 2>&1 || rc=$?
  sed -n '/^PLAY RECAP/,$p' "$log"
  if [ "$rc" -ne 0 ]; then
    show "$log" 80
    fail "ansible-playbook exited with $rc"
  fi
}
post() { curl -sS --max-time 10 -X POST "$1$2" -H 'Content-Type: application/json' -d "$3"; }
# json FIELD.PATH < document: prints the value (strings bare), empty when missing.
json() {
  python3 -c '
import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    if isinstance(value, list):
        value = value[int(key)] if len(value) > int(key) else None
    elif isinstance(value, dict):
        value = value.get(key)
    else:
        value = None
print("" if value is None else value if isinstance(value, str) else json.dumps(value))' "$1"
}
# The lock's holders as "session token" lines, through gateway $1.
holders() {
  curl -sS --max-time 10 "$1/v1/locks/$2" | python3 -c '
import json, sys
for h in json.load(sys.stdin).get("holders", []):
    print(h["session_id"], h["token"])'
}
ready() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1/health/ready"; }
# The ZooKeeper server with admin port $1 as "state zxid" (state: leader, follower, ...; "-" when it does not serve).
zk_srvr() {
  curl -sS --max-time 5 "http://127.0.0.1:$1/commands/srvr" 2>/dev/null | python3 -c '
import json, sys
try:
    doc = json.load(sys.stdin)
    stats = doc["server_stats"] if doc.get("error") is None else {}
except Exception:
    stats = {}
print(stats.get("server_state", "-"), stats.get("last_processed_zxid", 0))' 2>/dev/null || echo "- 0"
}
# zk_tree PORT PATH: PATH and every node under it on the ZooKeeper server at 127.0.0.1:PORT, a line each: its czxid
# (decimal) and its path. Read with the ZooKeeper client of the distribution zk1 runs (its zkCli needs commons-cli,
# which the distribution leaves out), by a small Java source file run as is. Exit status 2: PATH does not exist;
# 1: no connection within 20 s. Its messages go to zk-tree.log.
zk_tree() {
  if [ ! -f "$LOGS/ZkTree.java" ]; then
    echo '<configuration><root level="OFF"/></configuration>' >"$LOGS/zk-tree-logback.xml"
    cat >"$LOGS/ZkTree.java" <<'JAVA'
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public class ZkTree {
    public static void main(String[] args) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(args[0], 15000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        int status = 0;
        try {
            if (!connected.await(20, TimeUnit.SECONDS)) {
                System.err.println("no connection to " + args[0] + " within 20 s");
                status = 1;
            } else {
                print(zk, args[1]);
            }
        } catch (KeeperException.NoNodeException e) {
            System.err.println(args[0] + " has no node " + args[1]);
            status = 2;
        } finally {
            zk.close();
        }
        System.exit(status);
    }

    static void print(ZooKeeper zk, String path) throws Exception {
        Stat stat = new Stat();
        List<String> children = zk.getChildren(path, false, stat);
        System.out.println(stat.getCzxid() + " " + path);
        for (String child : children.stream().sorted().toList()) {
            try {
                print(zk, (path.equals("/") ? "" : path) + "/" + child);
            } catch (KeeperException.NoNodeException gone) {
                // deleted meanwhile
            }
        }
    }
}
JAVA
  fi
  java -Xmx64m -Dlogback.configurationFile="$LOGS/zk-tree-logback.xml" -cp "$SANDBOX/zk1/opt/warden-zookeeper/current/lib/*" \
    "$LOGS/ZkTree.java" "127.0.0.1:$1" "$2" 2>>"$LOGS/zk-tree.log" </dev/null
}
# warden cells --json through the gateways $1 (comma list): its output; its exit status in $LOGS/cells.rc.
cells_json() {
  local rc=0
  java -jar "$WARDEN_CLI_JAR" --endpoints "$1" --client-id deploy-test cells --json 2>>"$LOGS/cells.err" || rc=$?
  echo "$rc" >"$LOGS/cells.rc"
}

# ---- 0. preconditions ----------------------------------------------------------------------------------------------
step "preconditions"
for tool in ansible-playbook ansible-lint curl python3 java keytool openssl pgrep; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed: apt-get install -y ansible-core ansible-lint (./test.sh does)"
done
for artifact in "$WARDEN_JAR" "$WARDEN_CLI_JAR" "$ZK_DIST" "$ZK_CONF/zoo-common.cfg"; do
  [ -e "$artifact" ] || fail "$artifact is missing: build first (mvn -B -DskipTests package)"
done
for port in "${PORTS[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "port $port is already in use on 127.0.0.1; inventory/ci needs ${PORTS[*]}"
  fi
done
# Artifacts that are not the playbooks' defaults (../service/target/..., ../zk-config/...) are passed explicitly.
ARTIFACT_VARS=()
[ "$WARDEN_JAR" = "$REPO/service/target/warden-service.jar" ] || ARTIFACT_VARS+=(-e "warden_jar_source=$WARDEN_JAR")
[ "$ZK_DIST" = "$REPO/zk-config/target/warden-zookeeper-3.9.5.tar.gz" ] || ARTIFACT_VARS+=(-e "zookeeper_dist_source=$ZK_DIST")
[ "$ZK_CONF" = "$REPO/zk-config/conf" ] || ARTIFACT_VARS+=(-e "zookeeper_config_source=$ZK_CONF")
ARTIFACT_VARS_TEXT="${ARTIFACT_VARS[*]:+ ${ARTIFACT_VARS[*]}}"
SANDBOX="$(mktemp -d /tmp/warden-deploy.XXXXXX)"
LOGS="$SANDBOX/logs"
mkdir -p "$LOGS"
# Ansible's and ansible-lint's scratch files stay in the sandbox (and work without a usable HOME).
export ANSIBLE_LOCAL_TEMP="$SANDBOX/.ansible/tmp" ANSIBLE_REMOTE_TEMP="$SANDBOX/.ansible/tmp"
if [ -z "${HOME:-}" ] || [ ! -w "$HOME" ]; then export HOME="$SANDBOX/home"; mkdir -p "$HOME"; fi
echo "sandbox: $SANDBOX"
echo "$(ansible-playbook --version 2>&1 | sed -n 1p), $(ansible-lint --version 2>&1 | sed -n 1p)"
done_step

# ---- 1. lint -------------------------------------------------------------------------------------------------------
step "1. ansible-lint"
echo "\$ cd ansible && ansible-lint --strict"
rc=0
(cd "$ANSIBLE_DIR" && ansible-lint --strict) >"$LOGS/lint.log" 2>&1 || rc=$?
tail -n 3 "$LOGS/lint.log"
[ "$rc" -eq 0 ] || { show "$LOGS/lint.log" 80; fail "ansible-lint is not clean (exit $rc)"; }
done_step

# ---- 1b. render check ----------------------------------------------------------------------------------------------
step "1b. render check: warden.yaml with every ZooKeeper TLS and SASL variable set, and cell b (tests/render-check.yml)"
RENDER="$SANDBOX/render"
mkdir -p "$RENDER"
RENDER_PW=(trust-"$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
           key-"$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
           sasl-"$(python3 -c 'import secrets; print(secrets.token_hex(12))')")
# As a vault would give them. The stores need not exist: only the config file is rendered (.PFX: installed as .p12).
cat >"$RENDER/settings.json" <<JSON
{"warden_zk_tls_truststore_source": "/control/node/tls/cell-ca.PFX",
 "warden_zk_tls_truststore_password": "${RENDER_PW[0]}",
 "warden_zk_tls_keystore_source": "/control/node/tls/gateway.jks",
 "warden_zk_tls_keystore_password": "${RENDER_PW[1]}",
 "warden_zk_tls_hostname_verification": false,
 "warden_zk_sasl_user": "warden",
 "warden_zk_sasl_password": "${RENDER_PW[2]}",
 "warden_zk_acl": "sasl:warden:cdrwa,sasl:operator:r"}
JSON
playbook render.log tests/render-check.yml -e "render_dir=$RENDER" -e "render_settings=$RENDER/settings.json"
for pw in "${RENDER_PW[@]}"; do
  ! grep -q -- "$pw" "$LOGS/render.log" || fail "a password appears in the output of render-check.yml"
  ! grep -rq -- "$pw" "$RENDER"/gw*.yaml || fail "a password appears in a rendered warden.yaml"
done
for host in gw1 gw2; do
  python3 - "$RENDER/$host.yaml" "$SANDBOX/$host/etc/warden" <<'PY' || { show "$RENDER/$host.yaml"; fail "$host's rendered warden.yaml (above) is not as expected"; }
import sys, yaml
doc, conf = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
expected = {
    "zk": "127.0.0.1:22281,127.0.0.1:22282,127.0.0.1:22283",   # the servers' zookeeper_secure_client_port
    "zk-tls-truststore": conf + "/zk-truststore.p12",
    "zk-tls-truststore-password-file": conf + "/zk-truststore.password",
    "zk-tls-keystore": conf + "/zk-keystore.jks",
    "zk-tls-keystore-password-file": conf + "/zk-keystore.password",
    "zk-tls-hostname-verification": False,
    "zk-sasl-user": "warden",
    "zk-sasl-password-file": conf + "/zk-sasl.password",
    "zk-acl": "sasl:warden:cdrwa,sasl:operator:r",
    "cells": "b=127.0.0.1:22285",   # the group zookeeper_b's secure client port, the gateway's chroot
    "routes": "pay=b",
}
wrong = {k: doc.get(k) for k, v in expected.items() if doc.get(k) != v}
for k, v in wrong.items():
    print(f"{k}: {v!r}, expected {expected[k]!r}")
sys.exit(1 if wrong else 0)
PY
  echo "$host: warden.yaml has zk-tls-*, zk-sasl-*, zk-acl with the installed paths and zk: $(sed -n 's/^zk: //p' "$RENDER/$host.yaml"), cells: $(sed -n 's/^cells: //p' "$RENDER/$host.yaml")"
done
rescued="$(sed -n 's/^gw1 .* rescued=\([0-9]*\).*/\1/p' "$LOGS/render.log")"
[ "$rescued" = 10 ] || fail "the role's checks refused $rescued of the 10 wrong settings on gw1 (render.log)"
echo "the role's checks refused all 10 wrong settings (JAAS and SASL user, key store without trust store, ..., a cell"
echo "named default, a cell's missing group, a cell on the default cell's path, a route to no cell, ...)"
done_step

# ---- 2. deploy -----------------------------------------------------------------------------------------------------
step "2. deploy 3 ZooKeeper servers, cell b's 1 and 2 gateways (site.yml)"
playbook deploy.log site.yml
for gw in "$GW1" "$GW2"; do
  [ "$(ready "$gw")" = 200 ] || fail "$gw/health/ready does not answer 200 after the deployment"
done
for admin in 28081 28082 28083 "$CELL_B_ADMIN"; do
  state="$(curl -sS --max-time 5 "http://127.0.0.1:$admin/commands/srvr" | json server_stats.server_state)"
  echo "ZooKeeper admin :$admin: $state"
  case "$state" in leader | follower) ;; *) fail "the ZooKeeper server with admin port $admin is not serving ($state)" ;; esac
done
done_step

# ---- 3. smoke ------------------------------------------------------------------------------------------------------
step "3. smoke: acquire through gateway 1, see the hold through gateway 2"
reply="$(post "$GW1" /v1/sessions '{"client_id":"deploy-test","ttl_ms":30000}')"
session="$(json session_id <<<"$reply")"
[ -n "$session" ] || fail "POST $GW1/v1/sessions answered: $reply"
reply="$(post "$GW1" /v1/acquire '{"session_id":"'"$session"'","name":"ci/smoke","wait_ms":5000}')"
[ "$(json status <<<"$reply")" = GRANTED ] || fail "POST $GW1/v1/acquire answered: $reply"
token="$(json token <<<"$reply")"
echo "gateway 1: session $session holds ci/smoke with token $token"
seen="$(holders "$GW2" ci/smoke)"
echo "gateway 2: ci/smoke is held by: $seen"
[ "$seen" = "$session $token" ] || fail "gateway 2 shows holder(s) '$seen', expected '$session $token'"
curl -sS --max-time 10 -X DELETE "$GW1/v1/sessions/$session" >/dev/null
seen="$(holders "$GW2" ci/smoke)"
[ -z "$seen" ] || fail "ci/smoke is still held after its session was closed: $seen"
echo "session closed: gateway 2 shows ci/smoke free"
done_step

# ---- 3b. cells ------------------------------------------------------------------------------------------------------
step "3b. cells: warden cells lists default and b; pay/smoke through gateway 1 is held in cell b's ZooKeeper"
echo "\$ warden --endpoints $GW1 cells --json"
cells_json "$GW1" >"$LOGS/cells.json"
cat "$LOGS/cells.json"
[ "$(cat "$LOGS/cells.rc")" = 0 ] || { show "$LOGS/cells.err"; fail "warden cells exited with $(cat "$LOGS/cells.rc") (5: a cell does not serve)"; }
python3 - "$LOGS/cells.json" <<'PY' || fail "warden cells --json (above) does not list default and b, both serving, b with the namespace pay"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
names = [c["name"] for c in cells]
b = cells[1] if len(cells) > 1 else {}
problems = []
if names != ["default", "b"]:
    problems.append(f"cells {names}, expected ['default', 'b']")
problems += [f"cell {c['name']} is not serving: {c.get('detail')}" for c in cells if c.get("serving") is not True]
if b.get("namespaces") != ["pay"]:
    problems.append(f"cell b serves {b.get('namespaces')}, expected ['pay']")
if b.get("zk", "127.0.0.1:22185") != "127.0.0.1:22185":   # shown to admins only: everyone in open mode
    problems.append(f"cell b is on {b.get('zk')}, expected 127.0.0.1:22185 (the group zookeeper_b)")
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
echo "warden cells: default and b serve; b serves pay"

reply="$(post "$GW1" /v1/sessions '{"client_id":"deploy-test","ttl_ms":30000}')"
session="$(json session_id <<<"$reply")"
[ -n "$session" ] || fail "POST $GW1/v1/sessions answered: $reply"
reply="$(post "$GW1" /v1/acquire '{"session_id":"'"$session"'","name":"pay/smoke","wait_ms":5000}')"
[ "$(json status <<<"$reply")" = GRANTED ] || fail "POST $GW1/v1/acquire of pay/smoke answered: $reply"
token="$(json token <<<"$reply")"
echo "gateway 1: session $session holds pay/smoke with token $token"
seen="$(holders "$GW2" pay/smoke)"
echo "gateway 2: pay/smoke is held by: $seen"
[ "$seen" = "$session $token" ] || fail "gateway 2 shows holder(s) '$seen' for pay/smoke, expected '$session $token'"

# Where the queue is: the lock's node is <chroot>/locks/pay/<shard>/smoke (the service's CellPaths), its children
# the queue; the holder's entry was made in the acquire's transaction, so its czxid is the token (a new cell: no
# token floor).
echo "\$ ZooKeeper at 127.0.0.1:$CELL_B_ZK (cell b): the tree /warden/locks/pay; at 127.0.0.1:22181 (default): /warden/locks"
rc=0
zk_tree "$CELL_B_ZK" /warden/locks/pay >"$LOGS/zk-b-locks.txt" || rc=$?
entry="$(grep -E '^[0-9]+ /warden/locks/pay/[0-9a-f]{3}/smoke/[^/]+$' "$LOGS/zk-b-locks.txt" || true)"
if [ "$rc" -ne 0 ] || [ "$(grep -c . <<<"$entry")" -ne 1 ]; then
  show "$LOGS/zk-b-locks.txt"
  show "$LOGS/zk-tree.log"
  fail "cell b's ZooKeeper has not exactly one queue entry of pay/smoke (zk_tree exit $rc)"
fi
echo "cell b: queue entry ${entry#* }, czxid ${entry%% *}"
[ "${entry%% *}" = "$token" ] || fail "the queue entry in cell b has czxid ${entry%% *}, expected the token $token"
rc=0
zk_tree 22181 /warden/locks >"$LOGS/zk-default-locks.txt" || rc=$?
[ "$rc" -eq 0 ] || { show "$LOGS/zk-tree.log"; fail "could not read /warden/locks in the default cell's ZooKeeper (zk_tree exit $rc)"; }
if grep -qE '^[0-9]+ /warden/locks/pay(/|$)' "$LOGS/zk-default-locks.txt"; then
  show "$LOGS/zk-default-locks.txt"
  fail "the default cell's ZooKeeper has nodes of the namespace pay, which cell b serves"
fi
echo "default cell: $(grep -c . "$LOGS/zk-default-locks.txt") nodes under /warden/locks, none of the namespace pay"

reply="$(post "$GW1" /v1/release '{"session_id":"'"$session"'","name":"pay/smoke","token":'"$token"'}')"
[ "$(json released <<<"$reply")" = true ] || fail "POST $GW1/v1/release of pay/smoke answered: $reply"
seen="$(holders "$GW2" pay/smoke)"
[ -z "$seen" ] || fail "pay/smoke is still held after its release: $seen"
left="$({ zk_tree "$CELL_B_ZK" /warden/locks/pay || true; } | grep -E '^[0-9]+ /warden/locks/pay/[0-9a-f]{3}/smoke/' || true)"
[ -z "$left" ] || fail "cell b's ZooKeeper still has the queue entry of pay/smoke after its release: $left"
curl -sS --max-time 10 -X DELETE "$GW1/v1/sessions/$session" >/dev/null
echo "released: gateway 2 shows pay/smoke free, its entry is gone from cell b"
done_step

# ---- 4. a held lock across a rolling restart of the gateways ---------------------------------------------------------
step "4. hold ci/held with 'warden lock' across a rolling restart of the gateways"
token_file="$SANDBOX/token"
echo "\$ warden --endpoints $GW1,$GW2 lock ci/held --ttl 15s --wait 30s -- sh -c 'echo \"\$WARDEN_TOKEN\" > $token_file; exec sleep 600' &"
# shellcheck disable=SC2016 # $WARDEN_TOKEN and $0 are expanded by the command's own shell
java -jar "$WARDEN_CLI_JAR" --endpoints "$GW1,$GW2" --client-id deploy-test \
  lock ci/held --ttl 15s --wait 30s -- sh -c 'echo "$WARDEN_TOKEN" > "$0"; exec sleep 600' "$token_file" \
  >"$LOGS/cli.log" 2>&1 &
CLI_PID=$!
for _ in $(seq 1 60); do
  [ -s "$token_file" ] && break
  kill -0 "$CLI_PID" 2>/dev/null || { show "$LOGS/cli.log"; fail "warden lock exited before its command ran"; }
  sleep 0.5
done
[ -s "$token_file" ] || fail "warden lock did not run its command within 30 s"
held_token="$(cat "$token_file")"
before="$(holders "$GW2" ci/held)"
held_session="${before%% *}"
echo "ci/held: session $held_session, token $held_token (WARDEN_TOKEN)"
[ "$before" = "$held_session $held_token" ] || fail "gateway 2 shows '$before' for ci/held, expected token $held_token"

playbook restart.log warden.yml -e warden_rolling_restart=true
grep -q 'Drain, stop and start the gateway' "$LOGS/restart.log" || fail "the rolling restart restarted no gateway"
for gw in "$GW1" "$GW2"; do
  [ "$(ready "$gw")" = 200 ] || fail "$gw is not ready after the rolling restart"
done
for host in gw1 gw2; do   # drained on SIGTERM, not killed after the stop timeout
  grep -q "gateway $host drained and stopped" "$SANDBOX/$host/var/log/warden/warden.log" \
    || fail "the log of $host has no 'gateway $host drained and stopped': it did not drain"
done
kill -0 "$CLI_PID" 2>/dev/null || { show "$LOGS/cli.log"; fail "warden lock exited during the rolling restart (it lost the lock)"; }
for gw in "$GW1" "$GW2"; do
  after="$(holders "$gw" ci/held)"
  echo "after the restart, $gw shows ci/held held by: $after"
  [ "$after" = "$held_session $held_token" ] || fail "ci/held through $gw: '$after', expected '$held_session $held_token'"
done
done_step

# ---- 4b. the same held lock across a rolling restart of the ZooKeeper ensembles -------------------------------------
step "4b. keep ci/held across a rolling restart of the ZooKeeper ensembles (the default cell's and cell b's)"
# The default cell's servers, then cell b's one (its own ensemble: it leads itself).
ZK_HOSTS=(zk1 zk2 zk3 zkb1)
ZK_ADMIN=(28081 28082 28083 "$CELL_B_ADMIN")
# Before: each server's process (pid file: pid and start time in clock ticks), its "Starting quorum peer" lines, and
# the default cell's leader. After: a new live process each, one more such line each, the default cell's old leader
# started after its followers, one leader there.
declare -A zk_proc_before zk_starts_before
old_leader="" old_epoch=0
for i in 0 1 2 3; do
  host="${ZK_HOSTS[$i]}"
  zk_proc_before[$host]="$(cat "$SANDBOX/$host/run/zookeeper/zookeeper.pid")"
  zk_starts_before[$host]="$(grep -c 'Starting quorum peer' "$SANDBOX/$host/var/log/zookeeper/zookeeper.out" || true)"
  read -r state zxid <<<"$(zk_srvr "${ZK_ADMIN[$i]}")"
  echo "before: $host (admin :${ZK_ADMIN[$i]}) is $state, process ${zk_proc_before[$host]% *}, zxid epoch $((zxid >> 32))"
  if [ "$i" -lt 3 ] && [ "$state" = leader ]; then old_leader="$host" old_epoch=$((zxid >> 32)); fi
done
[ -n "$old_leader" ] || fail "no ZooKeeper server reports itself leader before the rolling restart"
for host in gw1 gw2; do   # the gateways' ZooKeeper connection events from here on are shown below
  wc -l <"$SANDBOX/$host/var/log/warden/warden.log" >"$LOGS/$host.lines"
done

zk_restart_t0=$SECONDS
playbook zk-restart.log zookeeper.yml -e zookeeper_rolling_restart=true
echo "the ZooKeeper rolling restart took $((SECONDS - zk_restart_t0)) s"
# The order the playbook restarted the servers in, from its log: one at a time; of the default cell's, the
# followers first, the old leader last.
all_order="$(grep -A1 -F 'TASK [zookeeper : Restart the server (supervisor)]' "$LOGS/zk-restart.log" \
  | sed -n 's/^changed: \[\(zk[0-9a-z]*\)\].*/\1/p' | paste -sd' ')"
order="$(tr ' ' '\n' <<<"$all_order" | grep -x 'zk[1-3]' | paste -sd' ')"
echo "restarted in this order: $all_order (the default cell's leader before: $old_leader)"
[ "$order" != "${order%"$old_leader"}" ] || fail "the rolling restart restarted '$order' of the default cell: not every server, or the leader $old_leader not last"
[ "$(wc -w <<<"$order")" -eq 3 ] || fail "the rolling restart restarted '$order' of the default cell, expected all 3 servers"
[ "$(wc -w <<<"$all_order")" -eq 4 ] && grep -qw zkb1 <<<"$all_order" \
  || fail "the rolling restart restarted '$all_order', expected the 3 servers of the default cell and cell b's zkb1"

leaders=0 new_leader="" new_epoch=0 last_started="" last_ticks=0
for i in 0 1 2 3; do
  host="${ZK_HOSTS[$i]}"
  read -r pid ticks <"$SANDBOX/$host/run/zookeeper/zookeeper.pid"
  [ "$pid $ticks" != "${zk_proc_before[$host]}" ] || fail "$host runs the same process as before ($pid): it was not restarted"
  "$SANDBOX/$host/usr/local/bin/warden-supervise" status "$SANDBOX/$host/run/zookeeper/zookeeper.pid" >/dev/null \
    || fail "$host: its new process $pid does not run"
  age="$(ps -o etimes= -p "$pid" | tr -d ' ' || true)"
  if [ -z "$age" ] || [ "$age" -gt $((SECONDS - zk_restart_t0 + 1)) ]; then
    fail "$host: process $pid is ${age:-?} s old, older than the rolling restart (begun $((SECONDS - zk_restart_t0)) s ago)"
  fi
  starts="$(grep -c 'Starting quorum peer' "$SANDBOX/$host/var/log/zookeeper/zookeeper.out" || true)"
  [ "$starts" -eq $((zk_starts_before[$host] + 1)) ] \
    || fail "$host: zookeeper.out has $starts 'Starting quorum peer' lines, expected $((zk_starts_before[$host] + 1))"
  read -r state zxid <<<"$(zk_srvr "${ZK_ADMIN[$i]}")"
  echo "after: $host is $state, new process $pid (${age} s old, was ${zk_proc_before[$host]% *}), zxid epoch $((zxid >> 32))"
  if [ "$host" = zkb1 ]; then   # cell b's only server: its own leader
    case "$state" in leader | standalone) ;; *) fail "zkb1 (cell b) does not serve after the rolling restart ($state)" ;; esac
    continue
  fi
  if [ "$ticks" -gt "$last_ticks" ]; then last_started="$host" last_ticks="$ticks"; fi
  case "$state" in
    leader) leaders=$((leaders + 1)) new_leader="$host" new_epoch=$((zxid >> 32)) ;;
    follower) ;;
    *) fail "$host does not serve after the rolling restart ($state)" ;;
  esac
done
[ "$leaders" -eq 1 ] || fail "$leaders servers of the default cell report themselves leader after the rolling restart, expected 1"
[ "$last_started" = "$old_leader" ] || fail "the newest process is $last_started's, but the old leader $old_leader should have been restarted last"
[ "$new_epoch" -gt "$old_epoch" ] || fail "the leader's epoch is $new_epoch, was $old_epoch: no new election after the leader restarted"
echo "one leader: $new_leader (was $old_leader), epoch $old_epoch -> $new_epoch"

for host in gw1 gw2; do
  events="$(tail -n +$(($(cat "$LOGS/$host.lines") + 1)) "$SANDBOX/$host/var/log/warden/warden.log" \
    | sed -n 's/.*State change: \([A-Z_]*\).*/\1/p' | paste -sd' ')"
  echo "$host's ZooKeeper connection during the restart: ${events:-no change}"
done
for gw in "$GW1" "$GW2"; do   # a gateway may still be reconnecting to the ensemble
  for _ in $(seq 1 30); do [ "$(ready "$gw")" = 200 ] && break; sleep 0.5; done
  [ "$(ready "$gw")" = 200 ] || fail "$gw is not ready 15 s after the ZooKeeper rolling restart"
  # Readiness follows the default cell only: cell b serves again once warden cells exits 0.
  for _ in $(seq 1 30); do
    cells_json "$gw" >"$LOGS/cells.json"
    [ "$(cat "$LOGS/cells.rc")" = 0 ] && break
    sleep 1
  done
  [ "$(cat "$LOGS/cells.rc")" = 0 ] || { cat "$LOGS/cells.json"; fail "through $gw, a cell does not serve 30 s after the ZooKeeper rolling restart"; }
  echo "$gw: $(python3 -c 'import json, sys; print(", ".join(c["name"] + (" serving" if c["serving"] else " NOT serving") for c in json.load(sys.stdin)["cells"]))' <"$LOGS/cells.json")"
done
kill -0 "$CLI_PID" 2>/dev/null || { show "$LOGS/cli.log"; fail "warden lock exited during the ZooKeeper rolling restart (it lost the lock)"; }
for gw in "$GW1" "$GW2"; do
  after="$(holders "$gw" ci/held)"
  echo "after the ZooKeeper restart, $gw shows ci/held held by: $after"
  [ "$after" = "$held_session $held_token" ] || fail "ci/held through $gw: '$after', expected '$held_session $held_token'"
done

# End the command: warden lock releases the lock and exits with the command's status (143: SIGTERM).
command_pid="$(pgrep -P "$CLI_PID" -x sleep || true)"
[ -n "$command_pid" ] || fail "the command of warden lock (sleep) is not running"
kill -TERM "$command_pid"
rc=0
wait "$CLI_PID" || rc=$?
CLI_PID=""
[ "$rc" -eq 143 ] || { show "$LOGS/cli.log"; fail "warden lock exited with $rc, expected 143 (its command's SIGTERM)"; }
seen="$(holders "$GW1" ci/held)"
[ -z "$seen" ] || fail "ci/held is still held after warden lock ended: $seen"
echo "warden lock ended (exit $rc); ci/held is free"
done_step

# ---- 5. idempotence ------------------------------------------------------------------------------------------------
step "5. site.yml again: no changes"
playbook rerun.log site.yml
recap="$(sed -n '/^PLAY RECAP/,$p' "$LOGS/rerun.log" | grep -E '^[a-z0-9]+ +: ok=')"
[ "$(grep -c . <<<"$recap")" -eq 6 ] || fail "expected 6 hosts in the PLAY RECAP (zk1-zk3, zkb1, gw1, gw2)"
if grep -v -E ' changed=0 .* failed=0 ' <<<"$recap"; then
  grep -B3 -E '^changed:' "$LOGS/rerun.log" | head -60
  fail "the second run changed something (above)"
fi
done_step

# ---- 5b. principals ------------------------------------------------------------------------------------------------
step "5b. principals: warden.yml with warden_principals writes auth.yaml; then 401 without the token, 201 with it"
TOKEN="ci-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
printf '{"warden_principals":[{"name":"ci","token":"%s","grants":[{"namespace":"*","role":"lock"}]}]}\n' "$TOKEN" \
  >"$LOGS/principals.json"
playbook principals.log warden.yml -e "@$LOGS/principals.json"
! grep -q -- "$TOKEN" "$LOGS/principals.log" || fail "the token appears in the playbook's output (no_log)"
! grep -rq --include=auth.yaml -- "$TOKEN" "$SANDBOX" || fail "the token is written in clear to auth.yaml"
for gw in "$GW1" "$GW2"; do
  [ "$(ready "$gw")" = 200 ] || fail "$gw/health/ready does not answer 200 after the principals were deployed"
  code="$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X POST "$gw/v1/sessions" -H 'Content-Type: application/json' \
    -d '{"client_id":"deploy-test"}')"
  [ "$code" = 401 ] || fail "$gw answered $code without a token, expected 401"
  code="$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X POST "$gw/v1/sessions" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $TOKEN" -d '{"client_id":"deploy-test"}')"
  [ "$code" = 201 ] || fail "$gw answered $code with the principal's token, expected 201"
  echo "$gw: 401 without the token, 201 with it"
done
done_step

# ---- 6. teardown ---------------------------------------------------------------------------------------------------
step "6. teardown: stop everything"
playbook teardown.log teardown.yml
left="$(pgrep -a -f -- "$SANDBOX/" || true)"
[ -z "$left" ] || fail "processes of the sandbox still run after teardown.yml: $left"
for port in "${PORTS[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then fail "port $port still answers after teardown.yml"; fi
done
echo "no ZooKeeper server or gateway of the sandbox is left"
done_step

# ---- 7. a secured cell: TLS and SASL ---------------------------------------------------------------------------------
step "7. a TLS+SASL cell (inventory/ci-secure): one ZooKeeper server, one gateway with warden_zk_tls_*/warden_zk_sasl_*"
SECURE="$SANDBOX/secure"
SECRETS="$SECURE/secrets"
mkdir -p "$SECRETS"
STORE_PW="store-$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
SASL_PW="sasl-$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
# A CA; a server and a gateway certificate for 127.0.0.1 and localhost (a server checks the gateway's too: FIPS mode
# is off for SASL). The servers' stores as zk-config's tls/zoo-tls.cfg names them (server.p12, ca.p12, passwords);
# the gateway's trust store ca.p12 (with a password), its key store one PEM with key and certificate.
(
  cd "$SECRETS"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=deploy-test-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
  for who in server gateway; do
    openssl req -newkey rsa:2048 -nodes -keyout "$who.key" -out "$who.csr" -subj "/CN=deploy-test-$who"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >"$who.ext"
    openssl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile "$who.ext" -out "$who.crt"
  done
  openssl pkcs12 -export -in server.crt -inkey server.key -certfile ca.pem -name server -out server.p12 \
    -passout "pass:$STORE_PW"
  keytool -importcert -noprompt -alias ca -file ca.pem -keystore ca.p12 -storetype PKCS12 -storepass "$STORE_PW"
  cat gateway.key gateway.crt >gateway.pem
  printf '%s\n' "$STORE_PW" >store.pass
  sed -e "s/CHANGE-ME-warden-gateway-password/$SASL_PW/" -e "s/CHANGE-ME-operator-password/operator-$STORE_PW/" \
    -e "s/CHANGE-ME-quorum-password/quorum-$STORE_PW/" "$ZK_CONF/sasl/jaas.conf" >jaas.conf
  printf '{"warden_zk_tls_truststore_password": "%s", "warden_zk_sasl_password": "%s"}\n' "$STORE_PW" "$SASL_PW" \
    >passwords.json
  chmod 0600 ./*
) >"$LOGS/secrets.log" 2>&1 || { show "$LOGS/secrets.log"; fail "making the certificates failed"; }
INVENTORY=inventory/ci-secure DEPLOY_ROOT="$SECURE" playbook secure.log site.yml -e "@$SECRETS/passwords.json"
[ "$(ready "$GW_SECURE")" = 200 ] || fail "$GW_SECURE/health/ready does not answer 200 after the deployment"
grep -q "ssl.clientAuth=need" "$SECURE/zk1/etc/zookeeper/zoo.cfg" && grep -q "enforce.auth.enabled=true" "$SECURE/zk1/etc/zookeeper/zoo.cfg" \
  || fail "zk1's zoo.cfg has not both mutual TLS and enforced SASL"
for pw in "$STORE_PW" "$SASL_PW"; do
  ! grep -q -- "$pw" "$LOGS/secure.log" || fail "a password appears in the playbook's output (no_log)"
  ! grep -q -- "$pw" "$SECURE/gw1/etc/warden/warden.yaml" "$SECURE/gw1/opt/warden/bin/warden-gateway" \
    || fail "a password appears in gw1's warden.yaml or launcher"
done
conf="$SECURE/gw1/etc/warden"
python3 - "$conf/warden.yaml" "$conf" <<'PY' || { show "$conf/warden.yaml"; fail "gw1's warden.yaml (above) is not as expected"; }
import sys, yaml
doc, conf = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
expected = {
    "zk": "127.0.0.1:22284",   # zk1's zookeeper_secure_client_port, not its client port 22184
    "zk-tls-truststore": conf + "/zk-truststore.p12",
    "zk-tls-truststore-password-file": conf + "/zk-truststore.password",
    "zk-tls-keystore": conf + "/zk-keystore.pem",
    "zk-tls-hostname-verification": True,
    "zk-sasl-user": "warden",
    "zk-sasl-password-file": conf + "/zk-sasl.password",
    "zk-acl": "auto",
}
wrong = {k: doc.get(k) for k, v in expected.items() if doc.get(k) != v}
wrong.update({k: doc[k] for k in ["zk-tls-keystore-password-file"] if k in doc})   # a PEM key store has none
for k, v in wrong.items():
    print(f"{k}: {v!r}, expected {expected.get(k)!r}")
sys.exit(1 if wrong else 0)
PY
modes="$(cd "$conf" && stat -c '%n %a' zk-truststore.p12 zk-truststore.password zk-keystore.pem zk-sasl.password | paste -sd' ')"
[ "$modes" = "zk-truststore.p12 444 zk-truststore.password 400 zk-keystore.pem 400 zk-sasl.password 400" ] \
  || fail "gw1's ZooKeeper files have the modes: $modes"
[ "$(head -n1 "$conf/zk-sasl.password")" = "$SASL_PW" ] || fail "zk-sasl.password does not hold the SASL password"
grep -q 'TLS (trust store .*zk-truststore.p12, client certificate .*zk-keystore.pem), SASL DIGEST-MD5 as warden, ACL sasl:warden:cdrwa' \
  "$SECURE/gw1/var/log/warden/warden.log" || fail "gw1's log does not say it talks TLS with a client certificate and SASL as warden"
echo "gw1: warden.yaml, modes $modes; it talks TLS with a client certificate, SASL as warden, ACL sasl:warden:cdrwa"
reply="$(post "$GW_SECURE" /v1/sessions '{"client_id":"deploy-test","ttl_ms":30000}')"
session="$(json session_id <<<"$reply")"
[ -n "$session" ] || fail "POST $GW_SECURE/v1/sessions answered: $reply"
reply="$(post "$GW_SECURE" /v1/acquire '{"session_id":"'"$session"'","name":"ci/secure","wait_ms":5000}')"
[ "$(json status <<<"$reply")" = GRANTED ] || fail "POST $GW_SECURE/v1/acquire answered: $reply"
echo "through the TLS+SASL ensemble: session $session holds ci/secure with token $(json token <<<"$reply")"
INVENTORY=inventory/ci-secure DEPLOY_ROOT="$SECURE" playbook secure-teardown.log teardown.yml
left="$(pgrep -a -f -- "$SANDBOX/" || true)"
[ -z "$left" ] || fail "processes of the sandbox still run after teardown.yml: $left"
done_step
COMPLETED=1
