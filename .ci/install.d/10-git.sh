#!/usr/bin/env bash
# runner's output-sanitizer tests run real git over hostile output trees, and
# its pager case drives git on a terminal through util-linux `script`
# (Debian bsdutils). Idempotent: installs only what is missing.
set -euo pipefail
bash "$(dirname "$0")/00-apt.sh" git bsdutils
