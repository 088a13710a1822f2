# bench/nginx.sh — sourced by the page benchmarks (bench/pages/run.sh,
# bench/traefik/run.sh): the nginx that stackdome's page server is measured
# against, configured the same way for both.

# nginx_conf DIR LISTEN CODE PAGE HEADERS writes DIR/nginx.conf: one worker,
# no master, no logs, everything under DIR, answering GET /_errors/CODE with
# status CODE and the bytes of PAGE (served as nginx serves a branded error
# page: error_page from open_file_cache) with the headers stackdome sent
# (HEADERS, curl -D output of the same page), as far as nginx can.
nginx_conf() {
	local dir=$1 listen=$2 code=$3 page=$4 headers=$5 user_line=""
	h() { grep -i "^$1:" "$headers" | head -1 | cut -d' ' -f2- | tr -d '\r'; }
	if [ "$(id -u)" -eq 0 ]; then user_line="user $(id -un) $(id -gn);"; fi
	mkdir -p "$dir/www"
	cp "$page" "$dir/www/$code.html"
	cat >"$dir/nginx.conf" <<CONF
$user_line
worker_processes 1;
master_process off;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	server_tokens off;
	keepalive_requests 100000000;
	keepalive_timeout 75s;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	open_file_cache max=16 inactive=1h;
	open_file_cache_valid 1h;
	etag off;
	if_modified_since off;
	types { }
	server {
		listen $listen;
		root $dir/www;
		error_page $code /$code.html;
		location = /_errors/$code {
			return $code;
		}
		location = /$code.html {
			internal;
			default_type "$(h Content-Type)";
			add_header Vary "$(h Vary)" always;
			add_header Cache-Control "$(h Cache-Control)" always;
			add_header X-Content-Type-Options "$(h X-Content-Type-Options)" always;
			add_header Content-Security-Policy "$(h Content-Security-Policy)" always;
			add_header Referrer-Policy "$(h Referrer-Policy)" always;
			add_header X-Robots-Tag "$(h X-Robots-Tag)" always;
		}
	}
}
CONF
}
