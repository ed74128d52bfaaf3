package org.switchml.spark;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.serializers.JavaSerializer;
import org.apache.spark.serializer.KryoRegistrator;

import java.util.List;

/**
 * Registers every spark-switchml class that crosses the wire, so it works with
 * {@code spark.kryo.registrationRequired=true}. Set {@code spark.kryo.registrator=} this class.
 *
 * <p>{@link TaskOutcome} (shuffle data and task results, carrying O(dim) vectors) has a compact
 * serializer; the small records ({@link RegisterJob}, the loop's {@link ReplicatedLoop.Step} and
 * options, {@link TaskSettings}) go through Java serialization inside Kryo, because Kryo 4 cannot
 * construct records.
 */
public final class SwitchMLKryoRegistrator implements KryoRegistrator {

    /** The classes this registrator registers (tests check each round-trips). */
    public static List<Class<?>> registeredClasses() {
        return List.of(TaskOutcome.class, RegisterJob.class, TaskSettings.class, ReplicatedLoop.Step.class,
                ReplicatedLoop.Options.class);
    }

    @Override
    public void registerClasses(final Kryo kryo) {
        kryo.register(TaskOutcome.class, new OutcomeSerializer());
        kryo.register(TaskOutcome[].class); // collect() ships the reducer's partition as an array
        for (final Class<?> c : registeredClasses()) {
            if (c != TaskOutcome.class) {
                kryo.register(c, new JavaSerializer());
            }
        }
        // The estimator's cached input blocks (spill to disk with MEMORY_AND_DISK). Named, not linked:
        // this package sits below org.switchml.spark.ml.
        for (final String name : ESTIMATOR_CLASSES) {
            try {
                kryo.register(Class.forName(name, false, SwitchMLKryoRegistrator.class.getClassLoader()), new JavaSerializer());
            } catch (final ClassNotFoundException e) {
                throw new IllegalStateException("spark-switchml jar incomplete: " + name, e);
            }
        }
    }

    /** Classes of org.switchml.spark.ml that Spark may serialize with Kryo. */
    static final List<String> ESTIMATOR_CLASSES = List.of(
            "org.switchml.spark.ml.classification.InstanceBatch");

    /** Field-by-field, with null-aware arrays. */
    static final class OutcomeSerializer extends Serializer<TaskOutcome> {
        @Override
        public void write(final Kryo kryo, final Output out, final TaskOutcome o) {
            out.writeInt(o.partition, true);
            out.writeByte(o.status);
            out.writeString(o.message);
            writeArray(out, o.vector);
            out.writeInt(o.iterations, true);
            out.writeBoolean(o.converged);
            writeArray(out, o.scalars);
            out.writeInt(o.scalarWidth, true);
            out.writeInt(o.timings == null ? 0 : o.timings.length + 1, true);
            if (o.timings != null) {
                out.writeLongs(o.timings);
            }
            out.writeInt(o.workers, true);
        }

        @Override
        public TaskOutcome read(final Kryo kryo, final Input in, final Class<TaskOutcome> type) {
            final int partition = in.readInt(true);
            final byte status = in.readByte();
            final String message = in.readString();
            final double[] vector = readArray(in);
            final int iterations = in.readInt(true);
            final boolean converged = in.readBoolean();
            final double[] scalars = readArray(in);
            final int width = in.readInt(true);
            final TaskOutcome o = new TaskOutcome(partition, status, message, vector, iterations, converged, scalars, width);
            final int t = in.readInt(true);
            o.timings = t == 0 ? null : in.readLongs(t - 1);
            o.workers = in.readInt(true);
            return o;
        }

        private static void writeArray(final Output out, final double[] a) {
            out.writeInt(a == null ? 0 : a.length + 1, true);
            if (a != null) {
                out.writeDoubles(a);
            }
        }

        private static double[] readArray(final Input in) {
            final int n = in.readInt(true);
            return n == 0 ? null : in.readDoubles(n - 1);
        }
    }
}
