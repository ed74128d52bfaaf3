package org.switchml.spark;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.serializers.JavaSerializer;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.apache.spark.serializer.KryoRegistrator;
import org.switchml.spark.messages.TaskOutcome;
import org.switchml.spark.messages.TaskSettings;

/**
 * Registers every spark-switchml class that crosses the wire, so it works with
 * {@code spark.kryo.registrationRequired=true}. Set {@code spark.kryo.registrator=} this class.
 *
 * <p>{@link TaskOutcome} (task results, carrying O(dim) vectors) has a compact serializer; the small
 * records (the loop's {@link ReplicatedLoop.Step} and options, {@link TaskSettings}) go through Java
 * serialization inside Kryo, because Kryo 4 cannot construct records. Libraries built on this one (the
 * estimators of org.switchml.spark.ml) add their classes as a {@link KryoClasses} service.
 */
public final class SwitchMLKryoRegistrator implements KryoRegistrator {

    /** Classes that another part of spark-switchml ships through Spark and registers with Kryo. */
    public interface KryoClasses {
        /** Classes to register; each goes through Java serialization inside Kryo. */
        List<Class<?>> classes();
    }

    /** Found once per class loader: Spark makes a Kryo instance (and so a registrator) per serializer use. */
    private static final List<Class<?>> CLASSES = findClasses();

    /** The classes this registrator registers (tests check each round-trips). */
    public static List<Class<?>> registeredClasses() {
        return CLASSES;
    }

    private static List<Class<?>> findClasses() {
        final List<Class<?>> out = new ArrayList<>(List.of(
                TaskOutcome.class, TaskSettings.class, ReplicatedLoop.Step.class, ReplicatedLoop.Options.class));
        for (final KryoClasses more :
                ServiceLoader.load(KryoClasses.class, SwitchMLKryoRegistrator.class.getClassLoader())) {
            out.addAll(more.classes());
        }
        return List.copyOf(out);
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
    }

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
            out.writeBoolean(o.inMemory);
            out.writeInt(o.shards, true);
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
            final TaskOutcome o =
                    new TaskOutcome(partition, status, message, vector, iterations, converged, scalars, width);
            final int t = in.readInt(true);
            o.timings = t == 0 ? null : in.readLongs(t - 1);
            o.workers = in.readInt(true);
            o.inMemory = in.readBoolean();
            o.shards = in.readInt(true);
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
