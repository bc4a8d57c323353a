#!/usr/bin/env bash
# Serve dpviz to a class: N `streamlit run app.py` replicas behind Debian's nginx, with sticky
# sessions and websocket upgrade.
#
#   bash scripts/serve.sh --replicas 2                   # http://127.0.0.1:8501, Ctrl-C stops all
#   bash scripts/serve.sh --replicas 4 --address 0.0.0.0 --port 8080   # reachable from the hall
#   bash scripts/serve.sh --replicas 0 --upstream 10.0.0.5:8501 --upstream 10.0.0.6:8501
#   bash scripts/serve.sh stop                            # from another shell
#
# Options: --replicas N (local replicas, default 2), --port P (nginx's port, default 8501),
# --address A (nginx listens here, default 127.0.0.1), --upstream HOST:PORT (a replica on another
# host, repeatable), --run-dir D (config, logs and pid files; default $TMPDIR/dpviz-serve).
#
# Local replicas listen on free 127.0.0.1 ports. nginx's configuration is generated into the run
# directory (nothing under /etc is touched) and nginx is installed with apt when it is missing.
# Stickiness: a browser's first request goes to the replica with the fewest open connections
# (each open tab holds one websocket, so that is the replica with the fewest students) and the
# answer sets a cookie naming that replica (dpviz_replica=r1, r2, …); every later request of the
# browser (its websocket /_stcore/stream, its downloads /media/…) goes to the named replica. A
# cookie rather than the client address: a lecture hall behind one NAT shares one address and
# would all land on one replica. A replica that stops answering hands its browsers to the others
# (the Streamlit page reconnects by itself; the session starts anew). The local replicas share
# one cookie secret (Streamlit signs its login cookies with it; set STREAMLIT_SERVER_COOKIE_SECRET
# to give replicas on other hosts the same one). Each local replica runs app.py once (Streamlit's
# script health check) before nginx sends it anyone: its first imports delay no student.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$PATH:/usr/sbin"  # where Debian puts nginx, also for users whose PATH lacks it

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

command_="start"
replicas=2
port=8501
address=127.0.0.1
run_dir="${TMPDIR:-/tmp}/dpviz-serve"
upstreams=()
while [ $# -gt 0 ]; do
  case "$1" in
    start|stop) command_="$1" ;;
    --replicas) replicas="$2"; shift ;;
    --port) port="$2"; shift ;;
    --address) address="$2"; shift ;;
    --upstream) upstreams+=("$2"); shift ;;
    --run-dir) run_dir="$2"; shift ;;
    -h|--help) usage 0 ;;
    *) echo "serve.sh: unknown argument '$1'" >&2; usage 2 ;;
  esac
  shift
done
case "$replicas" in ''|*[!0-9]*) echo "serve.sh: --replicas must be a whole number, got '$replicas'" >&2; exit 2 ;; esac
case "$port" in ''|*[!0-9]*) echo "serve.sh: --port must be a port number, got '$port'" >&2; exit 2 ;; esac
if [ "$command_" = start ] && [ "$replicas" -eq 0 ] && [ ${#upstreams[@]} -eq 0 ]; then
  echo "serve.sh: nothing to serve: give --replicas N (N ≥ 1) or --upstream HOST:PORT" >&2; exit 2
fi

if [ "$command_" = stop ]; then
  if [ ! -f "$run_dir/serve.pid" ] || ! kill -0 "$(cat "$run_dir/serve.pid")" 2>/dev/null; then
    rm -f "$run_dir/serve.pid" "$run_dir/replicas.pid"
    echo "serve.sh: no server running from $run_dir" >&2; exit 1
  fi
  kill -TERM "$(cat "$run_dir/serve.pid")"
  for _ in $(seq 100); do [ -f "$run_dir/serve.pid" ] || exit 0; sleep 0.2; done
  echo "serve.sh: the server did not stop within 20 s" >&2; exit 1
fi

if [ -f "$run_dir/serve.pid" ] && kill -0 "$(cat "$run_dir/serve.pid")" 2>/dev/null; then
  echo "serve.sh: already running from $run_dir (stop it with: bash scripts/serve.sh stop --run-dir $run_dir)" >&2
  exit 1
fi

if ! command -v nginx >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx >/dev/null
  else
    echo "serve.sh: nginx is missing and apt-get is not available: install nginx" >&2
    exit 1
  fi
fi
NGINX="$(command -v nginx)"

mkdir -p "$run_dir"
chmod 755 "$run_dir"  # nginx's workers (user nobody when started as root) create their temp files here
secret="${STREAMLIT_SERVER_COOKIE_SECRET:-$(python3 -c 'import secrets; print(secrets.token_hex(32))')}"
pids=()
nginx_pid=""
static_dir=""

stop_all() {
  trap - INT TERM EXIT
  if [ -n "$nginx_pid" ]; then kill -QUIT "$nginx_pid" 2>/dev/null || true; fi
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}" $nginx_pid; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$static_dir"
  rm -f "$run_dir/serve.pid" "$run_dir/replicas.pid"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo $$ > "$run_dir/serve.pid"

# Streamlit's own scripts and styles (content-hashed file names) are served by nginx: a new browser
# fetches about 30 of them, which cost a Python replica more CPU than the page's session and script
# run (benchmarks/results/server_cpu.md). Copied from the installed package into a directory of their
# own under /tmp (nginx's workers, user nobody when started as root, may read neither a home
# directory nor a private TMPDIR), with gzip siblings made once here for nginx's gzip_static (a
# lecture hall's Wi-Fi carries a quarter of the bytes, and nothing is compressed per request).
# Replicas on other hosts must run the same Streamlit version as this host.
static_src="$(python3 -c 'import os, streamlit; print(os.path.join(os.path.dirname(streamlit.__file__), "static", "static"))')"
static_dir="$(mktemp -d /tmp/dpviz-static.XXXXXX)"
cp -R "$static_src/." "$static_dir"
find "$static_dir" -type f \( -name '*.js' -o -name '*.css' -o -name '*.svg' \) -size +1k -exec gzip -k -6 {} +
chmod -R a+rX "$static_dir"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

addresses=()
ports=()
: > "$run_dir/replicas.pid"
for i in $(seq 1 "$replicas"); do
  p="$(free_port)"
  STREAMLIT_SERVER_COOKIE_SECRET="$secret" python3 -m streamlit run app.py \
    --server.port "$p" --server.address 127.0.0.1 --server.headless true \
    --server.scriptHealthCheckEnabled true \
    >"$run_dir/replica-$i.log" 2>&1 &
  pids+=($!)
  ports+=("$p")
  echo $! >> "$run_dir/replicas.pid"
  addresses+=("127.0.0.1:$p")
  echo "replica $i: http://127.0.0.1:$p (pid $!, log $run_dir/replica-$i.log)"
done
for u in "${upstreams[@]}"; do
  addresses+=("$u")
  echo "replica on another host: $u"
done
all_servers=""; named=""; by_cookie=""; by_address=""
for i in "${!addresses[@]}"; do
  a="${addresses[$i]}"; name="r$((i + 1))"
  all_servers+="        server $a max_fails=1 fail_timeout=10s;"$'\n'
  named+="    upstream $name { server $a; }"$'\n'
  by_cookie+="        $name $name;"$'\n'
  by_address+="        ~(^|\\s)${a//./\\.}\$ $name;"$'\n'  # the last address tried served it
done

cat > "$run_dir/nginx.conf" <<EOF
# Generated by scripts/serve.sh; nginx -p $run_dir -c $run_dir/nginx.conf
worker_processes 1;
pid $run_dir/nginx.pid;
error_log $run_dir/nginx-error.log warn;
events { worker_connections 4096; }
http {
    # which replica served each request, by stickiness key (tests/serve reads this)
    log_format dpviz '\$time_iso8601 \$dpviz_route \$upstream_addr \$status \$request_time "\$request"';
    access_log $run_dir/access.log dpviz;
    client_body_temp_path $run_dir/client_body;
    proxy_temp_path $run_dir/proxy;
    fastcgi_temp_path $run_dir/fastcgi;
    uwsgi_temp_path $run_dir/uwsgi;
    scgi_temp_path $run_dir/scgi;

    # A browser without the cookie (or with a stale one) goes to the least busy replica and
    # gets a cookie naming it; later requests with the cookie go to that replica.
    upstream dpviz {
        least_conn;
$all_servers    }
$named    map \$cookie_dpviz_replica \$dpviz_route {
$by_cookie        default dpviz;
    }
    map \$upstream_addr \$dpviz_served_by {
$by_address        default "";
    }
    map "\$dpviz_route:\$dpviz_served_by" \$dpviz_set_cookie {
        ~^dpviz:(?<name>r[0-9]+)\$ "dpviz_replica=\$name; Path=/; HttpOnly; SameSite=Lax";
        default "";
    }
    map \$http_upgrade \$connection_upgrade {
        default upgrade;
        ""      close;
    }
    server {
        listen $address:$port;
        client_max_body_size 200m;
        proxy_http_version 1.1;
        proxy_set_header Upgrade \$http_upgrade;
        proxy_set_header Connection \$connection_upgrade;
        proxy_set_header Host \$http_host;  # with the port: Streamlit compares it to Origin
        proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto \$scheme;
        proxy_read_timeout 1d;          # an open lecture tab keeps its websocket all day
        proxy_send_timeout 1d;
        proxy_buffering off;
        location /static/ {
            alias $static_dir/;
            types {                     # a module script served as text/plain would not run
                application/javascript js mjs;
                text/css css;
                font/woff2 woff2;
                font/woff woff;
                font/ttf ttf;
                image/svg+xml svg;
                image/png png;
                image/gif gif;
                application/json json map;
                application/wasm wasm;
            }
            default_type application/octet-stream;
            gzip_static on;
            gzip_vary on;
            add_header Cache-Control "public, immutable, max-age=31536000";
            access_log off;             # the log is of routed requests (tests/serve reads it)
        }
        location / {
            proxy_pass http://\$dpviz_route;
            add_header Set-Cookie \$dpviz_set_cookie always;
            error_page 502 504 = @rebalance;    # the named replica is down: pick another
        }
        location @rebalance {
            proxy_pass http://dpviz;
            add_header Set-Cookie "dpviz_replica=\$dpviz_served_by; Path=/; HttpOnly; SameSite=Lax" always;
        }
    }
}
EOF

# every local replica answers its health check before nginx sends it anyone
healthy() {
  python3 -c "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:$1/_stcore/health', timeout=2).read() != b'ok')" 2>/dev/null
}
# ... and has run the home page once (Streamlit's script health check runs app.py in a session of
# its own): a replica's first script run imports every module the pages use (dpviz.ui.preload),
# 1-2 s of CPU that would otherwise delay the first students the replica gets (the teacher's first
# open warms only the replica it lands on)
warm() {
  python3 -c "import sys, urllib.request as u; sys.exit(u.urlopen('http://127.0.0.1:$1/_stcore/script-health-check', timeout=90).read() != b'ok')" 2>/dev/null
}
for i in $(seq 1 "$replicas"); do
  for _ in $(seq 600); do
    healthy "${ports[$((i - 1))]}" && break
    kill -0 "${pids[$((i - 1))]}" 2>/dev/null || { echo "serve.sh: replica $i exited, see $run_dir/replica-$i.log" >&2; exit 1; }
    sleep 0.2
  done
done
warming=()
for i in $(seq 1 "$replicas"); do warm "${ports[$((i - 1))]}" & warming+=($!); done
for i in "${!warming[@]}"; do
  wait "${warming[$i]}" || echo "serve.sh: replica $((i + 1))'s first run of app.py failed, see $run_dir/replica-$((i + 1)).log" >&2
done

"$NGINX" -t -q -p "$run_dir" -e "$run_dir/nginx-error.log" -c "$run_dir/nginx.conf"
"$NGINX" -p "$run_dir" -e "$run_dir/nginx-error.log" -c "$run_dir/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
echo "dpviz: http://$address:$port ($replicas local replica(s), ${#upstreams[@]} on other hosts; Ctrl-C or 'bash scripts/serve.sh stop --run-dir $run_dir' stops)"
wait "$nginx_pid"
