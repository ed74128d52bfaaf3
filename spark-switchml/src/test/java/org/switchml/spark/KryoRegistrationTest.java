package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.serializer.KryoSerializer;
import org.apache.spark.serializer.SerializerInstance;
import org.junit.jupiter.api.Test;
import org.switchml.spark.messages.TaskOutcome;
import org.switchml.spark.messages.TaskSettings;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/** Every class of ours that crosses the wire round-trips through Kryo with registration required. */
class KryoRegistrationTest {
    private static final ClassTag<Object> ANY = ClassTag$.MODULE$.apply(Object.class);

    private static SerializerInstance kryo() {
        return new KryoSerializer(new SparkConf()
                        .set("spark.kryo.registrationRequired", "true")
                        .set("spark.kryo.registrator", SwitchMLKryoRegistrator.class.getName()))
                .newInstance();
    }

    @SuppressWarnings("unchecked")
    private static <T> T roundTrip(final SerializerInstance k, final T value) {
        return (T) k.deserialize(k.serialize(value, ANY), ANY);
    }

    @Test
    void everyWireClassRoundTrips() {
        final SerializerInstance k = kryo();
        final TaskOutcome sent =
                new TaskOutcome(3, TaskOutcome.OK, "m", new double[] {1, -2.5}, 7, true, new double[] {0.25}, 1);
        sent.workers = 5;
        sent.shards = 6;
        sent.inMemory = true;
        final TaskOutcome o = roundTrip(k, sent);
        assertEquals(3, o.partition);
        assertEquals(5, o.workers);
        assertEquals(6, o.shards);
        assertTrue(o.inMemory);
        assertArrayEquals(new double[] {1, -2.5}, o.vector);
        assertArrayEquals(new double[] {0.25}, o.scalars);
        assertEquals(7, o.iterations);
        final TaskOutcome none = roundTrip(k, TaskOutcome.unreachable(1, "gone"));
        assertNull(none.vector);
        assertEquals("gone", none.message);
        final TaskOutcome[] arr = roundTrip(k, new TaskOutcome[] {none});
        assertEquals(1, arr.length);
        final TaskSettings s = new TaskSettings(9, 1, 4, 64, 0, true, 1000, 60_000, 100);
        assertEquals(s, roundTrip(k, s));
        final ReplicatedLoop.Options opts = new ReplicatedLoop.Options(3, 1, 0.5);
        assertEquals(opts, roundTrip(k, opts));
        final ReplicatedLoop.Step step =
                roundTrip(k, new ReplicatedLoop.Step(new double[] {1}, new double[] {2}, true));
        assertArrayEquals(new double[] {1}, step.state());
        // The estimator's input blocks and broadcast statistics come in through its KryoClasses service.
        assertEquals(
                Set.of(
                        TaskOutcome.class.getName(),
                        TaskSettings.class.getName(),
                        ReplicatedLoop.Step.class.getName(),
                        ReplicatedLoop.Options.class.getName(),
                        "org.switchml.spark.ml.linear.InstanceBatch",
                        "org.switchml.spark.ml.linear.MeanStd"),
                SwitchMLKryoRegistrator.registeredClasses().stream()
                        .map(Class::getName)
                        .collect(Collectors.toSet()));
    }
}
