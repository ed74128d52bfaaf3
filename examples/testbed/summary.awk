# Reads the per-rank lines of RackAllReduce or mpi_allreduce (rank=R ... goodput_gbps=G exact=true|false
# cpu_s=S) and other processes' cpu_other=S lines, and prints one summary line: the median and the minimum of
# the per-worker goodputs, whether every rank's results were exact, and the CPU seconds over the timed calls of
# every process together and of the busiest. Variables: design, workers, load (set with -v). Exits 1 when a
# rank is missing or inexact.
/^rank=/ {
    delete field
    for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        field[kv[1]] = kv[2]
    }
    g[n++] = field["goodput_gbps"] + 0
    elements = field["elements"]
    reps = field["reps"]
    if (field["exact"] != "true") exact = "false"
    cpu_process(field["cpu_s"])
}
# Another process's CPU over the timed calls (a switch's), as cpu_other=SECONDS.
/^cpu_other=/ { split($1, kv, "="); cpu_process(kv[2]) }
function cpu_process(s) {
    if (s == "" || s == "nan" || s == "NaN") { cpu_unknown = 1; return }
    cpu_total += s
    if (s + 0 > cpu_busiest) cpu_busiest = s + 0
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
           "goodput_gbps_min=%.6g exact_all=%s load_average=%s cpu_s_total=%s cpu_s_busiest=%s\n", design, workers,
           n, elements, reps, median, n == 0 ? 0 : g[0], exact, load, cpu_unknown ? "nan" : sprintf("%.3f", cpu_total),
           cpu_unknown ? "nan" : sprintf("%.3f", cpu_busiest)
    exit (exact == "true" ? 0 : 1)
}
