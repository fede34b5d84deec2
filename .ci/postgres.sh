# Sourced by .ci/run: a throwaway PostgreSQL server for the store's tests.
# `start_postgres` installs the Debian package when no server binaries are
# found, starts a server on 127.0.0.1 (as a non-root user: PostgreSQL
# refuses to run as root) with its data under /tmp, and exports
# SKILLHOST_TEST_POSTGRES_URL; `stop_postgres` stops it and removes the data.
# The server also takes TLS, with a certificate for 127.0.0.1 from a CA made
# for the run (SKILLHOST_TEST_POSTGRES_CA, the CA's certificate), so the
# store's `sslmode=require` is tested against a real handshake.

pg_port="${SKILLHOST_CI_PG_PORT:-5433}"
pg_user=skillhost-pg
pg_dir=""

find_pg_bin() {
    local d
    for d in "$(dirname "$(command -v initdb 2>/dev/null || echo /none/initdb)")" \
        /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

# A CA and a server certificate for 127.0.0.1 it signed, in $1.
make_certificates() {
    local d=$1
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=skillhost test CA" \
        -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$d/server.ext"
    openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
        -days 2 -extfile "$d/server.ext" -out "$d/server.crt" 2>/dev/null
    chown "$pg_user" "$d/server.key" "$d/server.crt"
    chmod 600 "$d/server.key"
}

start_postgres() {
    local bin
    if ! bin=$(find_pg_bin); then
        echo "== PostgreSQL: installing the Debian package"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 \
            || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
        bin=$(find_pg_bin)
    fi
    if ! id "$pg_user" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$pg_user"
    fi
    pg_dir=$(mktemp -d /tmp/skillhost-pg.XXXXXX)
    chown "$pg_user" "$pg_dir"
    local as_pg=(su -s /bin/sh "$pg_user" -c)
    "${as_pg[@]}" "'$bin/initdb' -D '$pg_dir/data' -A trust -U postgres --no-sync -E UTF8 >'$pg_dir/initdb.log'"
    make_certificates "$pg_dir"
    # fsync off: the data is thrown away afterwards.
    "${as_pg[@]}" "'$bin/pg_ctl' -D '$pg_dir/data' -l '$pg_dir/server.log' -w \
        -o \"-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off \
              -c ssl=on -c ssl_cert_file=$pg_dir/server.crt -c ssl_key_file=$pg_dir/server.key\" start"
    export SKILLHOST_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$pg_port/postgres"
    export SKILLHOST_TEST_POSTGRES_CA="$pg_dir/ca.crt"
    echo "== PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port"
}

stop_postgres() {
    [ -n "$pg_dir" ] || return 0
    local bin
    bin=$(find_pg_bin) || return 0
    su -s /bin/sh "$pg_user" -c "'$bin/pg_ctl' -D '$pg_dir/data' -m fast -w stop" >/dev/null || true
    rm -rf "$pg_dir"
    pg_dir=""
}
