# Shared by the SDK checks: waits for `fleet dev fake-model`, whose first stdout line is
# `listening on URL`. Usage: URL=$(fake_model_url <stdout file> <server pid>); empty when the
# server died or did not answer within 30 s.
fake_model_url() {
  local out=$1 pid=$2 url=""
  for _ in $(seq 1 300); do
    if [[ -s "$out" ]]; then
      url=$(sed -n '1s/^listening on //p' "$out")
      [[ -n "$url" ]] && break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  printf '%s' "$url"
}
