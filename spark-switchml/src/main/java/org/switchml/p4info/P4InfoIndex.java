package org.switchml.p4info;

import com.google.protobuf.TextFormat;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import p4.config.v1.P4InfoOuterClass;
import p4.config.v1.P4InfoOuterClass.P4Info;

/**
 * Name and id lookups over a P4Info: every table, match field, action, action parameter and counter the
 * control plane touches is resolved here by name (fully qualified, or its alias), so no P4Runtime id is
 * ever written into code. The controller and the software switch's P4Runtime server both use it.
 */
public final class P4InfoIndex {
    /*
     * The P4Info and P4Runtime classes we carry are gencode from before protobuf 22, and protobuf-java 3.25
     * logs a "vulnerable protobuf generated type" warning for each such type it parses (the unbounded
     * recursion it warns of concerns untrusted input; these messages come only from the controller and the
     * switch it is configured to control). Its only opt-out is this system property, read at every parse.
     * Both sides of P4Runtime here (SwitchController, SwitchRuntimeServer) resolve names through a
     * P4InfoIndex before any message crosses the wire, so this class sets it, once, unless the user has. In
     * the shaded jar the property's name is relocated with protobuf (org.switchml.shaded...), so it
     * silences only our copy, never the protobuf that Spark or the application uses.
     */
    static {
        final String silencePre22Warning = "com.google.protobuf.use_unsafe_pre22_gencode";
        if (System.getProperty(silencePre22Warning) == null) {
            System.setProperty(silencePre22Warning, "true");
        }
    }

    /** Classpath location of the P4Info of {@code p4/switchml.p4} (copied there at build time). */
    public static final String BUNDLED_RESOURCE = "/org/switchml/p4info/switchml.p4info.txt";

    /** A match field or an action parameter: its id, name and width in bits. */
    public record Field(int id, String name, int bitwidth, boolean exact) {}

    /** A table: id, name, its match fields in id order, the ids of the actions it accepts, its size. */
    public record Table(int id, String name, List<Field> fields, Set<Integer> actionIds, long size) {
        public Table {
            fields = List.copyOf(fields);
            actionIds = Set.copyOf(actionIds);
        }

        /** The match field called {@code name}; throws naming the table when there is none. */
        public Field field(final String fieldName) {
            for (final Field f : fields) {
                if (f.name().equals(fieldName)) {
                    return f;
                }
            }
            throw new IllegalArgumentException("table " + name + " has no match field '" + fieldName + "' (fields: "
                    + fields.stream().map(Field::name).toList() + ")");
        }

        /** The match field with this id, or null. */
        public Field fieldById(final int fieldId) {
            for (final Field f : fields) {
                if (f.id() == fieldId) {
                    return f;
                }
            }
            return null;
        }
    }

    /** An action: id, name and its parameters in id order. */
    public record Action(int id, String name, List<Field> params) {
        public Action {
            params = List.copyOf(params);
        }

        /** The parameter called {@code name}; throws naming the action when there is none. */
        public Field param(final String paramName) {
            for (final Field f : params) {
                if (f.name().equals(paramName)) {
                    return f;
                }
            }
            throw new IllegalArgumentException("action " + name + " has no parameter '" + paramName + "' (parameters: "
                    + params.stream().map(Field::name).toList() + ")");
        }

        /** The parameter with this id, or null. */
        public Field paramById(final int paramId) {
            for (final Field f : params) {
                if (f.id() == paramId) {
                    return f;
                }
            }
            return null;
        }
    }

    /** An indirect counter: id, name and number of cells. */
    public record Counter(int id, String name, long size) {}

    private final P4Info p4info;
    private final Map<String, Table> tables = new LinkedHashMap<>();
    private final Map<Integer, Table> tablesById = new HashMap<>();
    private final Map<String, Action> actions = new LinkedHashMap<>();
    private final Map<Integer, Action> actionsById = new HashMap<>();
    private final Map<String, Counter> counters = new LinkedHashMap<>();
    private final Map<Integer, Counter> countersById = new HashMap<>();
    private final Map<String, Long> registerSizes = new LinkedHashMap<>();
    private final Map<String, String> aliases = new HashMap<>();

    /** Indexes {@code p4info}. */
    public P4InfoIndex(final P4Info p4info) {
        this.p4info = p4info;
        for (final P4InfoOuterClass.Table t : p4info.getTablesList()) {
            final List<Field> fields = new ArrayList<>();
            for (final P4InfoOuterClass.MatchField m : t.getMatchFieldsList()) {
                fields.add(new Field(
                        m.getId(),
                        m.getName(),
                        m.getBitwidth(),
                        m.getMatchType() == P4InfoOuterClass.MatchField.MatchType.EXACT));
            }
            fields.sort((a, b) -> Integer.compare(a.id(), b.id()));
            final Set<Integer> refs = new LinkedHashSet<>();
            for (final P4InfoOuterClass.ActionRef r : t.getActionRefsList()) {
                refs.add(r.getId());
            }
            final Table table =
                    new Table(t.getPreamble().getId(), t.getPreamble().getName(), fields, refs, t.getSize());
            tables.put(table.name(), table);
            tablesById.put(table.id(), table);
            alias(t.getPreamble(), "table");
        }
        for (final P4InfoOuterClass.Action a : p4info.getActionsList()) {
            final List<Field> params = new ArrayList<>();
            for (final P4InfoOuterClass.Action.Param p : a.getParamsList()) {
                params.add(new Field(p.getId(), p.getName(), p.getBitwidth(), true));
            }
            params.sort((x, y) -> Integer.compare(x.id(), y.id()));
            final Action action =
                    new Action(a.getPreamble().getId(), a.getPreamble().getName(), params);
            actions.put(action.name(), action);
            actionsById.put(action.id(), action);
            alias(a.getPreamble(), "action");
        }
        for (final P4InfoOuterClass.Counter c : p4info.getCountersList()) {
            final Counter counter =
                    new Counter(c.getPreamble().getId(), c.getPreamble().getName(), c.getSize());
            counters.put(counter.name(), counter);
            countersById.put(counter.id(), counter);
            alias(c.getPreamble(), "counter");
        }
        for (final P4InfoOuterClass.Register r : p4info.getRegistersList()) {
            registerSizes.put(r.getPreamble().getName(), (long) r.getSize());
            alias(r.getPreamble(), "register");
        }
    }

    private void alias(final P4InfoOuterClass.Preamble preamble, final String kind) {
        if (!preamble.getAlias().isEmpty()) {
            aliases.put(kind + ":" + preamble.getAlias(), preamble.getName());
        }
    }

    private String resolve(final String kind, final String name) {
        return aliases.getOrDefault(kind + ":" + name, name);
    }

    /** Parses a P4Info in protobuf text format (as p4c's {@code --p4runtime-files x.txt} writes it). */
    public static P4InfoIndex parse(final String text) {
        final P4Info.Builder b = P4Info.newBuilder();
        try {
            TextFormat.getParser().merge(text, b);
        } catch (final TextFormat.ParseException e) {
            throw new IllegalArgumentException("not a P4Info in text format: " + e.getMessage(), e);
        }
        return new P4InfoIndex(b.build());
    }

    /** Reads a P4Info text file. */
    public static P4InfoIndex load(final Path path) {
        try {
            return parse(Files.readString(path, StandardCharsets.UTF_8));
        } catch (final IOException e) {
            throw new IllegalArgumentException("cannot read P4Info " + path + ": " + e.getMessage(), e);
        }
    }

    /** The P4Info of {@code p4/switchml.p4} shipped in the library jar. */
    public static P4InfoIndex bundled() {
        try (InputStream in = P4InfoIndex.class.getResourceAsStream(BUNDLED_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + BUNDLED_RESOURCE + " is missing from the classpath");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (final IOException e) {
            throw new IllegalStateException("cannot read resource " + BUNDLED_RESOURCE + ": " + e.getMessage(), e);
        }
    }

    /** The indexed P4Info message. */
    public P4Info p4info() {
        return p4info;
    }

    /** The table called {@code name}; throws naming it when the P4Info has none. */
    public Table table(final String name) {
        final Table t = tables.get(resolve("table", name));
        if (t == null) {
            throw new IllegalArgumentException(
                    "no table '" + name + "' in the P4Info (tables: " + tables.keySet() + ")");
        }
        return t;
    }

    /** The table with this id, or null. */
    public Table tableById(final int id) {
        return tablesById.get(id);
    }

    /** The action called {@code name}; throws naming it when the P4Info has none. */
    public Action action(final String name) {
        final Action a = actions.get(resolve("action", name));
        if (a == null) {
            throw new IllegalArgumentException(
                    "no action '" + name + "' in the P4Info (actions: " + actions.keySet() + ")");
        }
        return a;
    }

    /** The action with this id, or null. */
    public Action actionById(final int id) {
        return actionsById.get(id);
    }

    /** The counter called {@code name}; throws naming it when the P4Info has none. */
    public Counter counter(final String name) {
        final Counter c = counters.get(resolve("counter", name));
        if (c == null) {
            throw new IllegalArgumentException(
                    "no counter '" + name + "' in the P4Info (counters: " + counters.keySet() + ")");
        }
        return c;
    }

    /** The counter with this id, or null. */
    public Counter counterById(final int id) {
        return countersById.get(id);
    }

    /** Every counter, in P4Info order. */
    public List<Counter> counters() {
        return List.copyOf(counters.values());
    }

    /** Every table, in P4Info order. */
    public List<Table> tables() {
        return List.copyOf(tables.values());
    }

    /**
     * Size of the register called {@code name}. Only the size is read (it sizes a resource the controller
     * allocates); registers themselves are never accessed over P4Runtime.
     */
    public long registerSize(final String name) {
        final Long size = registerSizes.get(resolve("register", name));
        if (size == null) {
            throw new IllegalArgumentException(
                    "no register '" + name + "' in the P4Info (registers: " + registerSizes.keySet() + ")");
        }
        return size;
    }

    /**
     * What {@code other} lacks or has differently, compared by name, for every table, action and counter of
     * this P4Info: match fields (name, width, match kind), table actions, parameters (name, width), counter
     * sizes. Ids may differ. Empty when {@code other} serves everything this one names.
     */
    public List<String> differencesFrom(final P4InfoIndex other) {
        final List<String> out = new ArrayList<>();
        for (final Table t : tables.values()) {
            final Table o = other.tables.get(t.name());
            if (o == null) {
                out.add("table " + t.name() + " is missing");
                continue;
            }
            if (!describeFields(t.fields()).equals(describeFields(o.fields()))) {
                out.add("table " + t.name() + " has match fields " + describeFields(o.fields()) + ", expected "
                        + describeFields(t.fields()));
            }
            final Set<String> mine = new TreeSet<>();
            for (final int id : t.actionIds()) {
                mine.add(actionsById.get(id).name());
            }
            final Set<String> theirs = new TreeSet<>();
            for (final int id : o.actionIds()) {
                final Action a = other.actionsById.get(id);
                theirs.add(a == null ? "#" + id : a.name());
            }
            if (!mine.equals(theirs)) {
                out.add("table " + t.name() + " has actions " + theirs + ", expected " + mine);
            }
        }
        for (final Action a : actions.values()) {
            final Action o = other.actions.get(a.name());
            if (o == null) {
                out.add("action " + a.name() + " is missing");
            } else if (!describeFields(a.params()).equals(describeFields(o.params()))) {
                out.add("action " + a.name() + " has parameters " + describeFields(o.params()) + ", expected "
                        + describeFields(a.params()));
            }
        }
        for (final Counter c : counters.values()) {
            final Counter o = other.counters.get(c.name());
            if (o == null) {
                out.add("counter " + c.name() + " is missing");
            } else if (o.size() != c.size()) {
                out.add("counter " + c.name() + " has " + o.size() + " cells, expected " + c.size());
            }
        }
        return Collections.unmodifiableList(out);
    }

    private static Map<String, String> describeFields(final List<Field> fields) {
        final Map<String, String> m = new TreeMap<>();
        for (final Field f : fields) {
            m.put(f.name(), "bit<" + f.bitwidth() + ">" + (f.exact() ? "" : " (not exact)"));
        }
        return m;
    }
}
