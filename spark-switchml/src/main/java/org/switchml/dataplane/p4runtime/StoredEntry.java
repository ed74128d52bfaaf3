package org.switchml.dataplane.p4runtime;

import java.util.List;
import java.util.Map;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/**
 * A table entry as stored: its canonical message, decoded key (in the table's field order), action name
 * and decoded parameters by name.
 */
record StoredEntry(TableEntry entry, List<Long> key, String action, Map<String, Long> params) {}
