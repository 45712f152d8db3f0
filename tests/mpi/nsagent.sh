#!/bin/sh
# mpirun's remote launcher (--mca plm_rsh_agent) for ranks in network namespaces: where
# mpirun would ssh to HOST, this runs the command in the namespace that owns the address HOST.
# Only namespaces named by MPI_NETNS (space-separated) are considered, so a test never
# starts processes in namespaces it did not make.
# Usage (by mpirun): nsagent.sh HOST COMMAND...
host=$1
shift
for ns in ${MPI_NETNS:-}; do
	if ip -n "$ns" -4 -o addr show | grep -q " inet $host/"; then
		exec ip netns exec "$ns" sh -c "$*"
	fi
done
echo "nsagent: no namespace of MPI_NETNS ($MPI_NETNS) has the address $host" >&2
exit 1
