package org.switchml.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A JVM the test starts as a separate process, its output in a log file, waited on with bounds only. */
final class Jvm implements AutoCloseable {
    final String name;
    final Process process;
    final Path log;

    private Jvm(final String name, final Process process, final Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code java jvmArgs... mainClass args...} with {@code env} added, output to {@code log}. */
    static Jvm start(
            final String name,
            final Path log,
            final Map<String, String> env,
            final List<String> jvmArgs,
            final String mainClass,
            final List<String> args)
            throws IOException {
        return start(name, log, env, List.of(), jvmArgs, mainClass, args);
    }

    /** {@link #start} behind {@code prefix} (e.g. {@code ip netns exec NS}: the JVM runs in that namespace). */
    static Jvm start(
            final String name,
            final Path log,
            final Map<String, String> env,
            final List<String> prefix,
            final List<String> jvmArgs,
            final String mainClass,
            final List<String> args)
            throws IOException {
        final List<String> cmd = new ArrayList<>(prefix);
        cmd.add(java());
        cmd.addAll(jvmArgs);
        cmd.add(mainClass);
        cmd.addAll(args);
        return spawn(name, log, env, cmd);
    }

    /**
     * Starts one of the repository's launchers ({@code bin/switchml-switch} ...) behind {@code prefix}, the way a
     * user runs it, with {@code env} added: the launcher finds this JVM's java through {@code JAVA} and uses the
     * jars of the build as they are ({@code SWITCHML_NO_BUILD=1}: a test must not start Maven).
     */
    static Jvm launch(
            final String name,
            final Path log,
            final Map<String, String> env,
            final List<String> prefix,
            final String launcher,
            final List<String> args)
            throws IOException {
        final Path script = Path.of(System.getProperty("switchml.it.root"), "bin", launcher);
        if (!Files.isExecutable(script)) {
            throw new AssertionError(script + " is not an executable launcher");
        }
        final List<String> cmd = new ArrayList<>(prefix);
        cmd.add(script.toString());
        cmd.addAll(args);
        final Map<String, String> all = new HashMap<>(env);
        all.put("JAVA", java());
        all.put("SWITCHML_NO_BUILD", "1");
        return spawn(name, log, all, cmd);
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Runs {@code cmd} with {@code env} added, its output (stdout and stderr) to {@code log}. */
    private static Jvm spawn(final String name, final Path log, final Map<String, String> env, final List<String> cmd)
            throws IOException {
        Files.createDirectories(log.getParent());
        final ProcessBuilder pb =
                new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        System.out.println(
                "[it] starting " + name + ": " + String.join(" ", cmd).replaceAll("--add-opens=\\S+ ", ""));
        return new Jvm(name, pb.start(), log);
    }

    String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (final IOException e) {
            return "(cannot read " + log + ": " + e + ")";
        }
    }

    /**
     * Waits until the log has a line matching {@code regex} and returns the match; fails naming the JVM,
     * the pattern and the log's tail when the process exits or the bound passes first.
     */
    Matcher await(final String regex, final long timeoutMs) throws InterruptedException {
        final Pattern p = Pattern.compile(regex);
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() - deadline < 0) {
            final Matcher m = p.matcher(output());
            if (m.find()) {
                return m;
            }
            if (!process.isAlive()) {
                throw new AssertionError(
                        name + " exited (" + process.exitValue() + ") before printing /" + regex + "/:\n" + tail(40));
            }
            // Polls a file another process writes; the bound is the loop's deadline.
            TimeUnit.MILLISECONDS.sleep(100);
        }
        throw new AssertionError(name + " did not print /" + regex + "/ within " + timeoutMs + " ms:\n" + tail(40));
    }

    /** Waits (bounded) for the process to exit and returns its exit code; kills it and fails on timeout. */
    int awaitExit(final long timeoutMs) throws InterruptedException {
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            close();
            throw new AssertionError(name + " did not finish within " + timeoutMs + " ms:\n" + tail(60));
        }
        return process.exitValue();
    }

    String tail(final int lines) {
        final String[] all = output().split("\n");
        return String.join("\n", Arrays.copyOfRange(all, Math.max(0, all.length - lines), all.length));
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
