# Reads the per-rank lines of RackAllReduce or mpi_allreduce (rank=R ... goodput_gbps=G exact=true|false) and
# prints one summary line: the median and the minimum of the per-worker goodputs, and whether every rank's
# results were exact. Variables: design, workers, load (set with -v). Exits 1 when a rank is missing or
# inexact.
/^rank=/ {
    for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        field[kv[1]] = kv[2]
    }
    g[n++] = field["goodput_gbps"] + 0
    elements = field["elements"]
    reps = field["reps"]
    if (field["exact"] != "true") exact = "false"
}
END {
    if (exact == "") exact = (n == workers) ? "true" : "false"
    if (n != workers) exact = "false"
    # insertion sort: a handful of ranks
    for (i = 1; i < n; i++) {
        v = g[i]
        for (j = i - 1; j >= 0 && g[j] > v; j--) g[j + 1] = g[j]
        g[j + 1] = v
    }
    median = n == 0 ? 0 : (n % 2 ? g[int(n / 2)] : (g[n / 2 - 1] + g[n / 2]) / 2)
    printf "summary design=%s workers=%d ranks_reported=%d elements=%s reps=%s goodput_gbps_median=%.6g " \
           "goodput_gbps_min=%.6g exact_all=%s load_average=%s\n", design, workers, n, elements, reps, median,
           n == 0 ? 0 : g[0], exact, load
    exit (exact == "true" ? 0 : 1)
}
