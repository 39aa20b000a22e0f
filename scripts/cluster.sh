#!/usr/bin/env bash
# A zen cluster on one machine without containers: redis-server and every
# role as its own process on loopback, two edges sharing threads through
# Redis. Used by `make cluster` / `make cluster-down` and by the end-to-end
# tests (cmd/zen/cluster_test.go).
#
#   scripts/cluster.sh up | down | status | restart <name>
#
# Names: redis, memory, router, executor, edge-1, edge-2, gateway, and the
# extra replicas memory-2 .. memory-9 (router-K, executor-K likewise).
# Environment:
#   ZEN_BIN                the zen binary (default bin/zen)
#   ZEN_CLUSTER_DIR        state: pids, logs, Redis data (default .cluster)
#   ZEN_REPLICAS_MEMORY, ZEN_REPLICAS_ROUTER, ZEN_REPLICAS_EXECUTOR
#                          replicas of that role, 1 to 9 (default 1). The
#                          roles that call it get every replica's address as
#                          a list (ZEN_EXECUTOR_ADDR=127.0.0.1:9093,127.0.0.1:9132)
#                          and spread their calls over all of them.
#   ZEN_CLUSTER_PORT_BASE  when set, ports are base+0 (redis) .. base+6, and
#                          replica K of memory, router, executor base+10+K,
#                          base+20+K, base+30+K; otherwise redis 6390,
#                          memory 9091, router 9092, executor 9093, gateway
#                          8081, edge-1 8080, edge-2 8082, and replica K
#                          9110+K, 9120+K, 9130+K
#   GOMAXPROCS             each zen process's Go threads at once, 1 to 9999;
#                          default the machine's cores shared out between the
#                          zen processes (at least 1 each). up keeps it for
#                          restart in $ZEN_CLUSTER_DIR/gomaxprocs
# Provider keys come from the environment or .env, as for zen serve.
# What it keeps is as private as zen serve's SQLite file: $ZEN_CLUSTER_DIR
# and everything in it are the user's alone, and Redis answers only with
# the password kept in $ZEN_CLUSTER_DIR/redis-password (REDIS_URL carries
# it to the roles; redis-server reads it from its config file, not from
# arguments every user can list).
set -euo pipefail
umask 077

ZEN_BIN=${ZEN_BIN:-bin/zen}
DIR=${ZEN_CLUSTER_DIR:-.cluster}
if [[ -n "${ZEN_CLUSTER_PORT_BASE:-}" ]]; then
	b=$ZEN_CLUSTER_PORT_BASE
	declare -A PORT=([redis]=$b [memory]=$((b + 1)) [router]=$((b + 2)) [executor]=$((b + 3)) [gateway]=$((b + 4)) [edge-1]=$((b + 5)) [edge-2]=$((b + 6)))
else
	declare -A PORT=([redis]=6390 [memory]=9091 [router]=9092 [executor]=9093 [gateway]=8081 [edge-1]=8080 [edge-2]=8082)
fi
HOST=127.0.0.1

die() {
	echo "cluster: $*" >&2
	exit 1
}

# Extra replicas' ports: the tens digit names the role.
declare -A TENS=([memory]=10 [router]=20 [executor]=30)

port() {
	local name=$1 k=${1##*-} role=${1%-[2-9]}
	if [[ $name != "$role" && -n ${TENS[$role]:-} ]]; then
		echo $((${ZEN_CLUSTER_PORT_BASE:-9100} + TENS[$role] + k))
	else
		echo "${PORT[$name]:?unknown member $name}"
	fi
}

addr() { echo "$HOST:$(port "$1")"; }

# replicas lists the members of a role: memory, memory-2, ...
replicas() {
	local role=$1 var n k
	var="ZEN_REPLICAS_${role^^}"
	n=${!var:-1}
	[[ $n =~ ^[1-9]$ ]] || die "$var=$n: want a number from 1 to 9"
	echo "$role"
	for ((k = 2; k <= n; k++)); do echo "$role-$k"; done
}

# addrs is the comma-separated list of a role's replicas, which zen dials
# as one target and balances over.
addrs() {
	local out="" m
	for m in $(replicas "$1"); do out+="${out:+,}$(addr "$m")"; done
	echo "$out"
}

for role in memory router executor; do replicas "$role" >/dev/null; done # fails here on a bad count
mapfile -t ORDER < <(
	echo redis
	replicas memory
	replicas router
	replicas executor
	printf '%s\n' edge-1 edge-2 gateway
)

# share_cores is each zen process's GOMAXPROCS. Go lets every process run
# threads on all the machine's cores, and wakes idle ones as work moves
# between goroutines; six or more processes that each do so take turns on
# the same few cores. Shared out, a call at one caller took 0.2 ms less on
# two cores and a fifth less CPU (docs/BENCHMARKS.md, the seventeenth step).
share_cores() {
	if [[ -n ${GOMAXPROCS:-} ]]; then
		[[ $GOMAXPROCS =~ ^[1-9][0-9]{0,3}$ ]] ||
			die "GOMAXPROCS=$GOMAXPROCS: want each zen process's threads, a number from 1 to 9999 (or unset it)"
		echo "$GOMAXPROCS"
		return
	fi
	local cores members=$((${#ORDER[@]} - 1)) # every member but redis
	cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
	echo $((cores / members > 1 ? cores / members : 1))
}

# PROCS is the members' GOMAXPROCS, set by up and restart before they start
# any: the share up worked out, which a member restarted alone keeps.
PROCS=

pidfile() { echo "$DIR/pids/$1.pid"; }

# alive tells whether process $1 still runs. A member that has exited but
# not been reaped (its parent, this script, is gone; the system reaps
# orphans when it gets to them) is a zombie that kill -0 still finds.
alive() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $state != Z* ]]
}

running() {
	local f
	f=$(pidfile "$1")
	[[ -f $f ]] && alive "$(cat "$f")"
}

# service_token is the secret the roles share, so their gRPC ports answer
# only each other (ZEN_SERVICE_TOKEN wins; else one is made once and kept in
# $DIR/service-token, for grpcurl -H "authorization: Bearer ...").
service_token() {
	if [[ -n ${ZEN_SERVICE_TOKEN:-} ]]; then
		echo "$ZEN_SERVICE_TOKEN"
		return
	fi
	local f="$DIR/service-token"
	[[ -s $f ]] || (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$f")
	cat "$f"
}

# redis_password is the password Redis asks of every connection: made once
# and kept in $DIR/redis-password.
redis_password() {
	local f="$DIR/redis-password"
	[[ -s $f ]] || od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$f"
	cat "$f"
}

# private makes what the script keeps in $DIR the user's alone, whatever
# an older version or another umask made it; not $DIR itself, nor the
# rest of what it holds: ZEN_CLUSTER_DIR may name a directory of the
# user's, such as their home. One the script makes is made private.
private() {
	local f
	for f in pids logs redis service-token redis-password gomaxprocs; do
		[[ -e $DIR/$f ]] && chmod -R go= "$DIR/$f"
	done
	return 0
}

# run_zen runs $ZEN_BIN in place of this shell with the role $2, its
# environment the cluster's (env, start's) and $1. The variables are
# exported by the shell itself: every user may read a process's arguments,
# and env's, passed the service token and the Redis password, showed them
# for the moment it took to start zen.
run_zen() {
	export "${env[@]}" "$1"
	exec "$ZEN_BIN" "$2"
}

# answers tells whether something accepts connections on port $1.
answers() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# start launches one member in the background and records its pid. A port
# that already answers is another process's: the member could not bind it,
# and the cluster's callers, which dial the port, would send that process
# the service token and every conversation.
start() {
	local name=$1 role=${1%-[0-9]}
	port "$name" >/dev/null
	running "$name" && { echo "cluster: $name already runs (pid $(cat "$(pidfile "$name")"))"; return; }
	if answers "$(port "$name")"; then
		die "$name cannot start: port $(port "$name") on $HOST is held by another process, not this cluster's $name.
Stop that process, or move the cluster's ports with ZEN_CLUSTER_PORT_BASE."
	fi
	local log="$DIR/logs/$name.log"
	local -a env=(
		"ZEN_SERVICE_TOKEN=$(service_token)"
		"ZEN_MEMORY_STORE=redis" "REDIS_URL=redis://:$(redis_password)@$(addr redis)/0"
		"ZEN_MEMORY_ADDR=$(addrs memory)" "ZEN_ROUTER_ADDR=$(addrs router)" "ZEN_EXECUTOR_ADDR=$(addrs executor)"
		"GOMAXPROCS=$PROCS"
	)
	case $role in
	redis)
		command -v redis-server >/dev/null || die "redis-server is not installed (make deps installs it)"
		printf 'requirepass %s\n' "$(redis_password)" >"$DIR/redis/redis.conf"
		redis-server "$DIR/redis/redis.conf" --bind "$HOST" --port "$(port redis)" --dir "$DIR/redis" \
			--appendonly yes --save '' --daemonize no >"$log" 2>&1 &
		;;
	memory | router | executor)
		run_zen "ZEN_GRPC_ADDR=$(addr "$name")" "$role" >"$log" 2>&1 &
		;;
	edge)
		run_zen "ZEN_MCP_ADDR=$(addr "$name")" edge >"$log" 2>&1 &
		;;
	gateway)
		run_zen "ZEN_HTTP_ADDR=$(addr gateway)" gateway >"$log" 2>&1 &
		;;
	*) die "unknown member $name" ;;
	esac
	echo $! >"$(pidfile "$name")"
	wait_healthy "$name"
}

healthy() {
	local name=$1
	case ${name%-[0-9]} in
	redis)
		(exec 3<>"/dev/tcp/$HOST/$(port redis)" && printf 'AUTH %s\r\nPING\r\n' "$(redis_password)" >&3 &&
			read -r -t 1 auth <&3 && [[ $auth == +OK* ]] &&
			read -r -t 1 reply <&3 && [[ $reply == +PONG* ]]) 2>/dev/null
		;;
	memory | router | executor) "$ZEN_BIN" health --grpc "$(addr "$name")" --timeout 1s >/dev/null 2>&1 ;;
	*) "$ZEN_BIN" health --http "http://$(addr "$name")/readyz" --timeout 1s >/dev/null 2>&1 ;;
	esac
}

# wait_healthy waits for the member's own process to answer on its port:
# healthy alone would take another process's answer there for the member's.
# A member that cannot bind its port exits at once, so it must still run
# after its port answered.
wait_healthy() {
	local name=$1
	for _ in $(seq 1 150); do
		if running "$name" && healthy "$name" && running "$name"; then
			echo "cluster: $name ready on $(addr "$name")"
			return
		fi
		running "$name" || die "$name exited; its log ($DIR/logs/$name.log) ends with:
$(tail -n 20 "$DIR/logs/$name.log")"
		sleep 0.2
	done
	die "$name did not become healthy within 30s; see $DIR/logs/$name.log"
}

stop() {
	local name=$1 f pid
	f=$(pidfile "$name")
	[[ -f $f ]] || return 0
	pid=$(cat "$f")
	if alive "$pid"; then
		# An idle role exits at once; one with calls in flight lets them
		# finish, for up to 10 s here (ZEN_DRAIN_TIMEOUT in a deployment).
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 200); do
			alive "$pid" || break
			sleep 0.05
		done
		alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
	echo "cluster: $name stopped"
}

cmd=${1:-}
case $cmd in
up)
	[[ -x $ZEN_BIN ]] || die "$ZEN_BIN is not built (make build)"
	PROCS=$(share_cores)
	mkdir -p "$DIR/pids" "$DIR/logs" "$DIR/redis"
	private
	echo "$PROCS" >"$DIR/gomaxprocs"
	for name in "${ORDER[@]}"; do start "$name"; done
	echo "cluster: up. MCP on http://$(addr edge-1)/mcp and http://$(addr edge-2)/mcp, gateway on http://$(addr gateway); logs in $DIR/logs"
	echo "cluster: memory $(addrs memory), router $(addrs router), executor $(addrs executor)"
	;;
down)
	for ((i = ${#ORDER[@]} - 1; i >= 0; i--)); do
		# Replicas this call's ZEN_REPLICAS_* leaves out stop with their role.
		if [[ -n ${TENS[${ORDER[i]}]:-} ]]; then
			for f in "$DIR/pids/${ORDER[i]}"-[2-9].pid; do
				[[ -e $f ]] && stop "$(basename "$f" .pid)"
			done
		fi
		stop "${ORDER[i]}"
	done
	;;
status)
	for name in "${ORDER[@]}"; do
		if running "$name" && healthy "$name"; then state=ready; elif running "$name"; then state="running, not ready"; else state=stopped; fi
		printf '%-11s %-22s %s\n' "$name" "$(addr "$name")" "$state"
	done
	;;
restart)
	[[ -n ${2:-} ]] || die "restart needs a member name"
	if [[ -s $DIR/gomaxprocs ]]; then PROCS=$(cat "$DIR/gomaxprocs"); else PROCS=$(share_cores); fi
	private
	stop "$2"
	start "$2"
	;;
*) die "usage: $0 up | down | status | restart <name>" ;;
esac
