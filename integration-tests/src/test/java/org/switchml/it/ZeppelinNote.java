package org.switchml.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Zeppelin note as Zeppelin 0.12 stores it ({@code .zpln}, UTF-8 JSON): its name, its note-level form values
 * ({@code noteParams}) and its paragraphs in order.
 *
 * @param file       where it was read from
 * @param name       the note's name
 * @param version    the Zeppelin version that wrote it
 * @param noteParams values of the note-level forms saved with the note
 * @param paragraphs the paragraphs, in the order Zeppelin runs them
 */
record ZeppelinNote(
        Path file, String name, String version, Map<String, String> noteParams, List<Paragraph> paragraphs) {

    /** The interpreter prefix on a paragraph's first line, with optional local properties, as Zeppelin reads it. */
    private static final Pattern PREFIX = Pattern.compile("^\\s*%([A-Za-z0-9_\\-]+(?:\\.\\w+)*)(\\([^)]*\\))?");

    /**
     * One paragraph.
     *
     * @param index       its position in the note, from 0
     * @param title       its title, or its id when untitled
     * @param interpreter the prefix without {@code %} ({@code spark} when the text has none: the note's default group)
     * @param body        the text after the prefix
     * @param enabled     false when the paragraph is disabled (Zeppelin's "run all" skips it)
     * @param charts      the charts its results are configured to draw
     */
    record Paragraph(int index, String title, String interpreter, String body, boolean enabled, List<Chart> charts) {
        /** How a failure names the paragraph. */
        String label() {
            return "paragraph " + index + " (%" + interpreter + ", \"" + title + "\")";
        }
    }

    /**
     * A chart of a paragraph's result ({@code config.results.N.graph}).
     *
     * @param mode    e.g. {@code lineChart}, {@code table}
     * @param columns the result columns the chart plots (its keys, groups and values)
     */
    record Chart(String mode, List<String> columns) {}

    static ZeppelinNote read(final Path file) throws IOException {
        final JsonNode root = new ObjectMapper().readTree(file.toFile());
        final Map<String, String> params = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.path("noteParams").fields(); it.hasNext(); ) {
            final Map.Entry<String, JsonNode> e = it.next();
            params.put(e.getKey(), e.getValue().asText());
        }
        final List<Paragraph> paragraphs = new ArrayList<>();
        for (final JsonNode p : root.path("paragraphs")) {
            final String text = p.path("text").asText("");
            final Matcher m = PREFIX.matcher(text);
            final boolean prefixed = m.find();
            final String interpreter =
                    prefixed ? m.group(1) : root.path("defaultInterpreterGroup").asText("spark");
            final String body = prefixed ? text.substring(m.end()) : text;
            final String title = p.path("title").asText(p.path("id").asText("untitled"));
            final boolean enabled = p.path("config").path("enabled").asBoolean(true);
            paragraphs.add(new Paragraph(
                    paragraphs.size(),
                    title,
                    interpreter,
                    body.strip(),
                    enabled,
                    charts(p.path("config").path("results"))));
        }
        return new ZeppelinNote(
                file,
                root.path("name").asText(file.getFileName().toString()),
                root.path("version").asText(""),
                params,
                paragraphs);
    }

    private static List<Chart> charts(final JsonNode results) {
        final List<Chart> charts = new ArrayList<>();
        for (final JsonNode r : results) {
            final JsonNode graph = r.path("graph");
            if (graph.isMissingNode()) {
                continue;
            }
            final List<String> columns = new ArrayList<>();
            for (final String part : new String[] {"keys", "groups", "values"}) {
                for (final JsonNode c : graph.path(part)) {
                    columns.add(c.path("name").asText());
                }
            }
            charts.add(new Chart(graph.path("mode").asText("table"), columns));
        }
        return charts;
    }
}
