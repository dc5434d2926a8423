#!/usr/bin/env bash
# Runs every test of Warden: `./test.sh [extra Maven arguments]`.
#
# First it installs, with apt-get, the Debian packages the tests need that this machine lacks (a JDK and Maven if
# missing; Chromium and its driver for the console's browser tests; ansible-core and ansible-lint for the deployment
# test; openssl for the TLS tests' certificates; systemd for systemd-analyze, which checks the shipped unit; prometheus
# for promtool, which checks the alert rules; curl and jq, with which a test types the README's walk-through and one
# runs the container image's health check), then it runs `mvn verify` and ends with one line counting the tests of this
# run from the Surefire and Failsafe reports:
# `tests: N passed, N failed, N skipped`. It exits with Maven's status.
# As root it installs directly, otherwise through sudo; where neither works (or on a machine without apt-get) it names
# the packages and goes on, and the tests that need them fail saying which package to install.
#
# `.ci/run` calls this script; so does `.ci/flake-hunt` in each of its clones.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# ---- system packages ---------------------------------------------------------------------------------------------
# command or file it provides : Debian package
required=(
  "javac:openjdk-17-jdk-headless"
  "mvn:maven"
  "/usr/bin/chromium:chromium"                 # the console's browser tests (ConsoleBrowserIT)
  "/usr/bin/chromedriver:chromium-driver"
  "ansible-playbook:ansible-core"              # the deployment test (AnsibleDeploymentIT runs ansible/tests/deploy-test.sh)
  "ansible-lint:ansible-lint"
  "openssl:openssl"                            # TlsTest and SecureZooKeeperIT make their CA and certificates
  "systemd-analyze:systemd"                    # DeploySystemdTest verifies deploy/systemd/warden.service
  "promtool:prometheus"                        # AlertRulesPromtoolTest checks docs/observability/warden-alerts.yml
  "curl:curl"                                  # ReadmeWalkthroughIT types the README's walk-through; ComposeTopologyIT
                                               # runs the container image's health check
  "jq:jq"                                      # ReadmeWalkthroughIT (the walk-through reads replies with jq)
)
missing=()
for entry in "${required[@]}"; do
  tool=${entry%%:*} package=${entry#*:}
  if [[ $tool == /* ]]; then [ -x "$tool" ] && continue; else command -v "$tool" >/dev/null 2>&1 && continue; fi
  missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
  if command -v apt-get >/dev/null 2>&1 && { [ ${#sudo[@]} -eq 0 ] || sudo -n true 2>/dev/null; }; then
    echo "== installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    echo "== cannot install ${missing[*]} here (needs apt-get as root or password-less sudo);" \
         "the tests that need them will fail naming the package" >&2
  fi
fi

# ---- the tests ---------------------------------------------------------------------------------------------------
marker="$(mktemp)"
trap 'rm -f "$marker"' EXIT

status=0
mvn "$@" verify || status=$?

# ---- one line counting the test reports this run wrote -----------------------------------------------------------
# Each TEST-*.xml starts with <testsuite ... tests="N" errors="N" skipped="N" failures="N" ...>.
attr() { grep -o -m1 "<testsuite [^>]*" "$1" | grep -o " $2=\"[0-9]*\"" | grep -o '[0-9][0-9]*' || echo 0; }
total_passed=0 total_failed=0 total_skipped=0
for kind in surefire failsafe; do
  tests=0 failed=0 skipped=0 suites=0
  while IFS= read -r -d '' report; do
    suites=$((suites + 1))
    tests=$((tests + $(attr "$report" tests)))
    failed=$((failed + $(attr "$report" failures) + $(attr "$report" errors)))
    skipped=$((skipped + $(attr "$report" skipped)))
  done < <(find . -path "*/${kind}-reports/TEST-*.xml" -newer "$marker" -print0 2>/dev/null)
  passed=$((tests - failed - skipped))
  echo "== ${kind} (${suites} test classes): ${tests} tests, ${passed} ok, ${failed} broken, ${skipped} skipped"
  total_passed=$((total_passed + passed)) total_failed=$((total_failed + failed)) total_skipped=$((total_skipped + skipped))
done

echo "tests: ${total_passed} passed, ${total_failed} failed, ${total_skipped} skipped"
if [ "$status" -ne 0 ]; then
  echo "== FAILED: mvn verify exited with status ${status}"
fi
exit "$status"
