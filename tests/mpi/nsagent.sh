#!/bin/sh
# mpirun's remote launcher (--mca plm_rsh_agent) for ranks in network namespaces: where
# mpirun would ssh to HOST, this runs the command in the namespace that owns the address HOST.
# Only namespaces named by MPI_NETNS (space-separated) are considered, so a test never
# starts processes in namespaces it did not make.
# With NSAGENT_ENV=clean the command starts with an empty environment but for PATH, as over
# ssh, where nothing of mpirun's environment reaches the other host unless mpirun passes it.
# Usage (by mpirun): nsagent.sh HOST COMMAND...
host=$1
shift
for ns in ${MPI_NETNS:-}; do
	if ip -n "$ns" -4 -o addr show | grep -q " inet $host/"; then
		[ "${NSAGENT_ENV:-}" = clean ] &&
			exec env -i PATH=/usr/local/bin:/usr/bin:/bin ip netns exec "$ns" sh -c "$*"
		exec ip netns exec "$ns" sh -c "$*"
	fi
done
echo "nsagent: no namespace of MPI_NETNS ($MPI_NETNS) has the address $host" >&2
exit 1
