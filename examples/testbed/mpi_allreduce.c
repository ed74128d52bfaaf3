/*
 * The baseline of the emulated rack (docs/testbed.md): MPI_Allreduce (sum) of ELEMENTS floats per rank,
 * REPS timed calls after one warm-up, each call started together after a barrier.
 *
 *   mpi_allreduce ELEMENTS REPS [SEED]
 *
 * Every rank's vector holds small whole numbers from a generator seeded with SEED and the rank, so any
 * summation order gives the same exact float sum, and every rank can compute that sum alone to check each
 * result. Rank 0 prints one line per rank in RackAllReduce's format:
 *   rank=R elements=E reps=N median_s=S goodput_gbps=G exact=true|false cpu_s=C
 * goodput = 32 * ELEMENTS / median seconds, in Gbit/s; cpu_s the rank's CPU seconds over the timed calls.
 * Exit codes: 0 ok, 1 a result was wrong, 2 usage.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |value| <= 1000 with at most 16384 ranks keeps every partial sum below 2^24: floats add it exactly. */
#define MAGNITUDE 1000

static uint64_t next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void fill(float *v, long n, uint64_t seed, int rank) {
    uint64_t state = seed * 1000003ULL + (uint64_t) rank;
    for (long i = 0; i < n; i++) {
        v[i] = (float) ((long) (next(&state) % (2 * MAGNITUDE + 1)) - MAGNITUDE);
    }
}

/* CPU seconds (user + system) of this process, from /proc/self/stat in USER_HZ ticks (1/100 s); -1 if unreadable. */
static double cpu_seconds(void) {
    char buf[4096];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) {
        return -1;
    }
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = 0;
    /* The command name may hold spaces: count fields after its closing parenthesis (state is field 3). */
    char *p = strrchr(buf, ')');
    unsigned long utime = 0, stime = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) {
        return -1;
    }
    return (utime + stime) / 100.0;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static long parse(const char *text, long min, long max) {
    char *end;
    long v = strtol(text, &end, 10);
    return (*text == '\0' || *end != '\0' || v < min || v > max) ? -1 : v;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long elements = argc >= 3 ? parse(argv[1], 1, 1L << 28) : -1;
    long reps = argc >= 3 ? parse(argv[2], 1, 100000) : -1;
    long seed = argc >= 4 ? parse(argv[3], 0, 1L << 62) : 42;
    if (argc < 3 || argc > 4 || elements < 0 || reps < 0 || seed < 0 || size > 16384) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpi_allreduce ELEMENTS REPS [SEED]  (ELEMENTS 1..2^28, REPS 1..100000,"
                    " at most 16384 ranks)\n");
        }
        MPI_Finalize();
        return 2;
    }
    float *in = malloc(elements * sizeof(float));
    float *out = malloc(elements * sizeof(float));
    float *expected = calloc(elements, sizeof(float));
    double *seconds = malloc(reps * sizeof(double));
    if (!in || !out || !expected || !seconds) {
        fprintf(stderr, "mpi_allreduce: rank %d: out of memory for %ld elements\n", rank, elements);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int r = 0; r < size; r++) {
        fill(in, elements, (uint64_t) seed, r);
        for (long i = 0; i < elements; i++) {
            expected[i] += in[i];
        }
    }
    fill(in, elements, (uint64_t) seed, rank);

    int exact = 1;
    double cpu_start = 0;
    for (long rep = -1; rep < reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rep == 0) {
            cpu_start = cpu_seconds();
        }
        double t0 = MPI_Wtime();
        MPI_Allreduce(in, out, (int) elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0;
        if (rep >= 0) {
            seconds[rep] = t;
        }
        if (memcmp(out, expected, elements * sizeof(float)) != 0) {
            exact = 0;
        }
    }
    double cpu = cpu_seconds() - cpu_start;
    qsort(seconds, reps, sizeof(double), compare);
    double median = reps % 2 ? seconds[reps / 2] : (seconds[reps / 2 - 1] + seconds[reps / 2]) / 2;

    double *medians = rank == 0 ? malloc(size * sizeof(double)) : NULL;
    int *exacts = rank == 0 ? malloc(size * sizeof(int)) : NULL;
    double *cpus = rank == 0 ? malloc(size * sizeof(double)) : NULL;
    MPI_Gather(&median, 1, MPI_DOUBLE, medians, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&cpu, 1, MPI_DOUBLE, cpus, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&exact, 1, MPI_INT, exacts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int all = exact;
    MPI_Allreduce(&exact, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            printf("rank=%d elements=%ld reps=%ld median_s=%.6f goodput_gbps=%.6g exact=%s cpu_s=%.3f\n", r, elements,
                   reps, medians[r], 32.0 * elements / medians[r] / 1e9, exacts[r] ? "true" : "false", cpus[r]);
        }
        fflush(stdout);
    }
    MPI_Finalize();
    return all ? 0 : 1;
}
