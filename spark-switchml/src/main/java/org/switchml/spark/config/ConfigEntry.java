package org.switchml.spark.config;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One typed {@code spark.switchml.*} setting: key, documentation, default, parser and validation. All
 * entries live in {@link SwitchMLConfig}; docs/configuration.md is generated from them.
 *
 * @param <T> the value type
 */
public final class ConfigEntry<T> {
    private final String key;
    private final String doc;
    private final String defaultText;
    private final Function<String, T> parser;
    private final Predicate<T> valid;
    private final String validText;

    ConfigEntry(
            final String key,
            final String doc,
            final String defaultText,
            final Function<String, T> parser,
            final Predicate<T> valid,
            final String validText) {
        this.key = Objects.requireNonNull(key);
        this.doc = Objects.requireNonNull(doc);
        this.defaultText = Objects.requireNonNull(defaultText);
        this.parser = parser;
        this.valid = valid;
        this.validText = validText;
        // A bad default is a programming error: fail at class initialisation.
        parse(defaultText);
    }

    /** The configuration key, e.g. {@code spark.switchml.k}. */
    public String key() {
        return key;
    }

    /** What the setting does. */
    public String doc() {
        return doc;
    }

    /** The default as written in a configuration ("" when unset). */
    public String defaultText() {
        return defaultText;
    }

    /** Human-readable rule a value must satisfy. */
    public String validText() {
        return validText;
    }

    /** Parses and validates {@code text}; errors name the key, the value and the rule. */
    public T parse(final String text) {
        final T value;
        try {
            value = parser.apply(text.trim());
        } catch (final RuntimeException e) {
            throw new IllegalArgumentException(
                    key + "='" + text + "' is invalid: must be " + validText
                            + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"),
                    e);
        }
        if (!valid.test(value)) {
            throw new IllegalArgumentException(key + "='" + text + "' is invalid: must be " + validText);
        }
        return value;
    }

    /** The value in {@code settings}, or the default. */
    public T from(final Function<String, String> settings) {
        final String v = settings.apply(key);
        return parse(v == null ? defaultText : v);
    }

    @Override
    public String toString() {
        return key;
    }
}
