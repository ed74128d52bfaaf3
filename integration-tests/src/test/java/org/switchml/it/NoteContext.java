package org.switchml.it;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The {@code z} that {@link ZeppelinSparkInterpreter} binds in the notes' Scala paragraphs: the part of Zeppelin's
 * {@code ZeppelinContext} the notes use. {@code show} renders a DataFrame as Zeppelin's {@code %table} text (the
 * header row tab-separated, then one tab-separated line per row); the form methods return the value the harness
 * gives the form, and fail the paragraph when it gives none (Zeppelin would use the default: the full size).
 */
public final class NoteContext {

    /**
     * What one {@code show} rendered.
     *
     * @param paragraph the paragraph that showed it
     * @param columns   the header row
     * @param rows      the number of rows rendered
     * @param text      the {@code %table} text
     */
    record Shown(String paragraph, List<String> columns, int rows, String text) {}

    private final Map<String, String> forms;
    private final int maxResult;
    private final Set<String> asked = new HashSet<>();
    private final List<Shown> shown = new ArrayList<>();
    private String paragraph = "";

    /**
     * @param forms     the value of every form the note may read
     * @param maxResult rows rendered at most per show (Zeppelin's {@code zeppelin.spark.maxResult})
     */
    NoteContext(final Map<String, String> forms, final int maxResult) {
        this.forms = Map.copyOf(forms);
        this.maxResult = maxResult;
    }

    /** Renders a DataFrame (or Dataset) as a {@code %table} result of the running paragraph. */
    public void show(final Object o) {
        show(o, maxResult);
    }

    /** Renders at most {@code limit} rows of a DataFrame (or Dataset) as a {@code %table} result. */
    public void show(final Object o, final int limit) {
        if (!(o instanceof Dataset<?> ds)) {
            throw new IllegalArgumentException(
                    "z.show takes a DataFrame here, not " + (o == null ? "null" : o.getClass()));
        }
        final Dataset<Row> df = ds.toDF();
        final List<String> columns = List.of(df.columns());
        final List<Row> rows = df.takeAsList(limit);
        final StringBuilder t =
                new StringBuilder("%table ").append(String.join("\t", columns)).append('\n');
        for (final Row row : rows) {
            for (int i = 0; i < row.length(); i++) {
                t.append(i == 0 ? "" : "\t").append(String.valueOf(row.get(i)).replaceAll("[\t\n]", " "));
            }
            t.append('\n');
        }
        shown.add(new Shown(paragraph, columns, rows.size(), t.toString()));
    }

    /** A paragraph-level text form's value; {@code defaultValue} is what Zeppelin shows at first. */
    public Object textbox(final String name, final String defaultValue) {
        return form(name, defaultValue);
    }

    /** A paragraph-level text form's value. */
    public Object textbox(final String name) {
        return form(name, "");
    }

    /** A note-level text form's value; {@code defaultValue} is what Zeppelin shows at first. */
    public Object noteTextbox(final String name, final String defaultValue) {
        return form(name, defaultValue);
    }

    /** A note-level text form's value. */
    public Object noteTextbox(final String name) {
        return form(name, "");
    }

    private Object form(final String name, final String defaultValue) {
        asked.add(name);
        if (!forms.containsKey(name)) {
            // Zeppelin would use the default; here that would run the note at full size in CI.
            throw new IllegalArgumentException("the form '" + name + "' has no value in the harness (its default is "
                    + defaultValue + "): give it a CI value in ZeppelinNotesIT.CI_FORMS");
        }
        return forms.get(name);
    }

    void startParagraph(final String label) {
        paragraph = label;
    }

    /** The shows of paragraph {@code label}, in order. */
    List<Shown> shownBy(final String label) {
        return shown.stream().filter(s -> s.paragraph().equals(label)).toList();
    }

    /** The forms a paragraph asked for so far. */
    Set<String> askedForms() {
        return Set.copyOf(asked);
    }
}
