package org.switchml.examples;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.switchml.examples.Cli.BadInput;

/**
 * What the example programs check of their input before they use it, so that bad input is one line naming the
 * file and the line or record, not a task that Spark retries and a page of stack: a local path that is missing
 * (checked before Spark starts), a LIBSVM line Spark's reader would fail on, a CSV record with an empty or
 * non-numeric field.
 */
final class Inputs {
    private Inputs() {}

    /**
     * The local file {@code pathOrUri} names, or null when it is on another file system (hdfs://..., or a path
     * without a scheme when Spark's default file system is not the local one), which only Spark can look at.
     */
    static Path local(final String pathOrUri) {
        final URI uri;
        try {
            uri = new URI(pathOrUri);
        } catch (final URISyntaxException e) {
            return Paths.get(pathOrUri); // not a URI (a space, say): a local path
        }
        if (uri.getScheme() == null) {
            return defaultFileSystemIsLocal() ? Paths.get(pathOrUri) : null;
        }
        if (uri.getScheme().equals("file")) {
            return Paths.get(uri.getPath());
        }
        // A Windows drive letter parses as a scheme of one letter.
        return uri.getScheme().length() == 1 ? Paths.get(pathOrUri) : null;
    }

    /** Whether a path without a scheme is local: Spark's {@code spark.hadoop.fs.defaultFS}, else Hadoop's. */
    private static boolean defaultFileSystemIsLocal() {
        String fs = new SparkConf().get("spark.hadoop.fs.defaultFS", null);
        if (fs == null) {
            fs = new Configuration().get("fs.defaultFS", "file:///");
        }
        return fs.startsWith("file:");
    }

    /**
     * Fails with one line when {@code pathOrUri}, given with {@code flag}, is a local path that does not exist or
     * cannot be read; paths on other file systems are left to Spark.
     */
    static void requireReadable(final String flag, final String pathOrUri) {
        final Path p = local(pathOrUri);
        if (p == null) {
            return;
        }
        if (!Files.exists(p)) {
            throw new BadInput(flag + " " + pathOrUri + ": no such file or directory");
        }
        if (!Files.isReadable(p)) {
            throw new BadInput(flag + " " + pathOrUri + ": not readable");
        }
    }

    /** Fails with one line when the directory {@code dir}, for {@code flag}, cannot be made or written. */
    static void requireWritableDirectory(final String flag, final Path dir) {
        Path p = dir.toAbsolutePath();
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        if (p == null) {
            throw new BadInput(flag + " " + dir + ": no existing directory above it");
        }
        if (!Files.isDirectory(p)) {
            throw new BadInput(flag + " " + dir + ": " + p + " is a file, not a directory");
        }
        if (!Files.isWritable(p)) {
            throw new BadInput(flag + " " + dir + ": " + p + " is not writable");
        }
    }

    // ------------------------------------------------------------------------------------ LIBSVM

    /**
     * What is wrong with one line of a LIBSVM file as Spark's reader parses it, or null when it reads: blank
     * lines and lines starting with {@code #} are skipped; then a label (a number), and {@code index:value}
     * pairs separated by single spaces, the indices one-based and ascending.
     */
    static String libsvmProblem(final String raw) {
        final String line = raw.trim();
        if (line.isEmpty() || line.startsWith("#")) {
            return null;
        }
        final String[] items = line.split(" ");
        try {
            Double.parseDouble(items[0]);
        } catch (final NumberFormatException e) {
            return "the label '" + items[0] + "' is not a number";
        }
        int previous = 0;
        for (int i = 1; i < items.length; i++) {
            if (items[i].isEmpty()) {
                continue;
            }
            final String[] entry = items[i].split(":");
            if (entry.length < 2) {
                return "'" + items[i] + "' is not index:value";
            }
            final int index;
            try {
                index = Integer.parseInt(entry[0]);
            } catch (final NumberFormatException e) {
                return "the index '" + entry[0] + "' is not a whole number";
            }
            try {
                Double.parseDouble(entry[1]);
            } catch (final NumberFormatException e) {
                return "the value '" + entry[1] + "' of index " + index + " is not a number";
            }
            if (index <= previous) {
                return index < 1
                        ? "the index " + index + " is not one-based"
                        : "the indices are not ascending: " + index + " after " + previous;
            }
            previous = index;
        }
        return null;
    }

    /**
     * Fails with one line naming the file, the line and what is wrong at the first line of the LIBSVM input
     * {@code pathOrUri} that Spark's reader would fail on. Local uncompressed files are read here, with their
     * line numbers; others (another file system, compressed files) by a Spark job that names the file and the
     * record, and never fails a task.
     */
    static void checkLibsvm(final SparkSession spark, final String flag, final String pathOrUri) {
        final Path p = local(pathOrUri);
        if (p != null) {
            final List<Path> files = dataFiles(flag, p);
            if (files.stream().noneMatch(Inputs::compressed)) {
                for (final Path f : files) {
                    checkLibsvmFile(flag, f);
                }
                return;
            }
        }
        checkLibsvmWithSpark(spark, flag, pathOrUri);
    }

    /** The files Spark reads for {@code p}: the file itself, or the directory's files that are not hidden. */
    static List<Path> dataFiles(final String flag, final Path p) {
        if (!Files.isDirectory(p)) {
            return List.of(p);
        }
        try (Stream<Path> s = Files.list(p)) {
            return s.filter(Files::isRegularFile)
                    .filter(f -> {
                        final String n = f.getFileName().toString();
                        return !n.startsWith(".") && !n.startsWith("_");
                    })
                    .sorted()
                    .toList();
        } catch (final IOException e) {
            throw Cli.unreadable(flag + " " + p, e);
        }
    }

    private static boolean compressed(final Path f) {
        final String n = f.getFileName().toString().toLowerCase(Locale.ROOT);
        for (final String ext : new String[] {".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".xz"}) {
            if (n.endsWith(ext)) {
                return true;
            }
        }
        return false;
    }

    private static void checkLibsvmFile(final String flag, final Path f) {
        try (BufferedReader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
            long n = 0;
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                n++;
                final String problem = libsvmProblem(line);
                if (problem != null) {
                    throw new BadInput(flag + " " + f + " line " + n + ": " + excerpt(line) + ": " + problem);
                }
            }
        } catch (final IOException e) {
            throw Cli.unreadable(flag + " " + f, e);
        }
    }

    /** The Spark side of {@link #checkLibsvm}: a job that returns the first bad record and never throws. */
    static void checkLibsvmWithSpark(final SparkSession spark, final String flag, final String pathOrUri) {
        final Dataset<Row> lines =
                spark.read().text(pathOrUri).select(functions.col("_metadata.file_path"), functions.col("value"));
        final List<String> first = lines.flatMap(
                        (FlatMapFunction<Row, String>) row -> {
                            final String problem = libsvmProblem(row.getString(1));
                            final Iterator<String> none = Collections.emptyIterator();
                            return problem == null
                                    ? none
                                    : List.of(displayed(row.getString(0)) + ": record " + excerpt(row.getString(1))
                                                    + ": " + problem)
                                            .iterator();
                        },
                        Encoders.STRING())
                .limit(1)
                .collectAsList();
        if (!first.isEmpty()) {
            throw new BadInput(flag + " " + first.get(0));
        }
    }

    /** A file as Spark names it ({@code file:///x}), as the user would write it ({@code /x}). */
    static String displayed(final String fileUri) {
        try {
            final URI u = new URI(fileUri);
            return "file".equals(u.getScheme()) ? u.getPath() : fileUri;
        } catch (final URISyntaxException e) {
            return fileUri;
        }
    }

    /** A line as quoted in a message: at most 80 characters. */
    static String excerpt(final String line) {
        final String t = line.strip();
        return "'" + (t.length() <= 80 ? t : t.substring(0, 77) + "...") + "'";
    }

    // ------------------------------------------------------------------------------------ CSV

    /**
     * Checks a CSV read with every column a string: {@code columns} must all be there (else one line naming the
     * columns the file has), none of their fields empty, and those of {@code numeric} numbers; the first record
     * that breaks a rule is named, with its file, in one line. A Spark job that never fails a task.
     */
    static void checkCsv(
            final Dataset<Row> table,
            final String flag,
            final String pathOrUri,
            final List<String> columns,
            final List<String> numeric) {
        final List<String> has = List.of(table.columns());
        final List<String> missing = new ArrayList<>(columns);
        missing.removeAll(has);
        if (!missing.isEmpty()) {
            throw new BadInput(flag + " " + pathOrUri + ": no column" + (missing.size() > 1 ? "s " : " ")
                    + String.join(", ", missing) + "; its columns: " + String.join(", ", has));
        }
        final String[] cols = columns.toArray(new String[0]);
        final boolean[] isNumber = new boolean[cols.length];
        for (int i = 0; i < cols.length; i++) {
            isNumber[i] = numeric.contains(cols[i]);
        }
        final List<org.apache.spark.sql.Column> selected = new ArrayList<>();
        selected.add(functions.col("_metadata.file_path"));
        for (final String c : cols) {
            selected.add(functions.col(c));
        }
        final List<String> first = table.select(selected.toArray(new org.apache.spark.sql.Column[0]))
                .flatMap(
                        (FlatMapFunction<Row, String>) row -> {
                            final Iterator<String> none = Collections.emptyIterator();
                            for (int i = 0; i < cols.length; i++) {
                                final String v = row.getString(i + 1);
                                String problem = null;
                                if (v == null || v.isBlank()) {
                                    problem = cols[i] + " is empty";
                                } else if (isNumber[i] && !isNumber(v)) {
                                    problem = cols[i] + " '" + v + "' is not a number";
                                }
                                if (problem != null) {
                                    final List<String> fields = new ArrayList<>();
                                    for (int j = 0; j < cols.length; j++) {
                                        fields.add(row.isNullAt(j + 1) ? "" : row.getString(j + 1));
                                    }
                                    return List.of(displayed(row.getString(0)) + ": record "
                                                    + excerpt(String.join(",", fields)) + ": " + problem)
                                            .iterator();
                                }
                            }
                            return none;
                        },
                        Encoders.STRING())
                .limit(1)
                .collectAsList();
        if (!first.isEmpty()) {
            throw new BadInput(flag + " " + first.get(0));
        }
    }

    private static boolean isNumber(final String v) {
        try {
            Double.parseDouble(v.trim());
            return true;
        } catch (final NumberFormatException e) {
            return false;
        }
    }
}
