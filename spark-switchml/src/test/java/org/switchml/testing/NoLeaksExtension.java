package org.switchml.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Registered for every Jupiter test class (service loader, autodetection on in junit-platform.properties):
 * captures Netty's leak reports and fails the class when any of its buffers leaked ({@link LeakDetection}).
 */
public final class NoLeaksExtension implements BeforeAllCallback, AfterAllCallback {
    @Override
    public void beforeAll(final ExtensionContext context) {
        LeakDetection.install();
    }

    @Override
    public void afterAll(final ExtensionContext context) {
        LeakDetection.check(context.getDisplayName());
    }
}
