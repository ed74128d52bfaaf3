package org.switchml.examples;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.connect.proto.Command;
import org.apache.spark.connect.proto.ConfigRequest;
import org.apache.spark.connect.proto.ExecutePlanRequest;
import org.apache.spark.connect.proto.ExecutePlanResponse;
import org.apache.spark.connect.proto.Expression;
import org.apache.spark.connect.proto.Fetch;
import org.apache.spark.connect.proto.InterruptRequest;
import org.apache.spark.connect.proto.MlCommand;
import org.apache.spark.connect.proto.MlCommandResult;
import org.apache.spark.connect.proto.MlOperator;
import org.apache.spark.connect.proto.MlParams;
import org.apache.spark.connect.proto.MlRelation;
import org.apache.spark.connect.proto.ObjectRef;
import org.apache.spark.connect.proto.Plan;
import org.apache.spark.connect.proto.Project;
import org.apache.spark.connect.proto.Read;
import org.apache.spark.connect.proto.ReattachExecuteRequest;
import org.apache.spark.connect.proto.ReattachOptions;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.connect.proto.RelationCommon;
import org.apache.spark.connect.proto.ReleaseExecuteRequest;
import org.apache.spark.connect.proto.SparkConnectServiceGrpc;
import org.apache.spark.connect.proto.UserContext;
import org.sparkproject.connect.grpc.ManagedChannel;
import org.sparkproject.connect.grpc.ManagedChannelBuilder;
import org.sparkproject.connect.grpc.StatusRuntimeException;

/**
 * A small Spark Connect client for Spark ML, in Java: it sends the messages PySpark's {@code pyspark.ml} sends
 * for an estimator's fit, a model's attributes and summary, a transform, a save and a load (Spark's own JVM
 * client has no ML API). It runs against a Spark 4.0 Connect server with nothing but the server's jar
 * ({@code spark-connect_2.13}, whose relocated gRPC and Connect protos it uses) and Spark's jars (Arrow, for
 * rows) on its classpath: it adds no second copy of the Connect protos.
 *
 * <p>One instance is one Connect session (a random UUID, as clients make them); {@link #newSession()} opens
 * another over the same channel. Every execution is reattachable, as PySpark's are: a stream the server ends
 * before the result is complete is reattached, and a complete one released. Every call has a deadline.
 */
public final class ConnectMl implements AutoCloseable {
    /** The stock estimator a PySpark {@code LogisticRegression} names on the server. */
    public static final String LOGISTIC_REGRESSION = "org.apache.spark.ml.classification.LogisticRegression";
    /** The stock model class a PySpark {@code LogisticRegressionModel.load} names on the server. */
    public static final String LOGISTIC_REGRESSION_MODEL = "org.apache.spark.ml.classification.LogisticRegressionModel";

    private final String target;
    private final ManagedChannel channel;
    private final boolean ownsChannel;
    private final String sessionId = UUID.randomUUID().toString();
    private final UserContext user;
    private final long deadlineMs;
    private final AtomicLong planIds = new AtomicLong();

    private ConnectMl(
            final String target,
            final ManagedChannel channel,
            final boolean ownsChannel,
            final String userId,
            final long deadlineMs) {
        this.target = target;
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        this.user = UserContext.newBuilder().setUserId(userId).build();
        this.deadlineMs = deadlineMs;
    }

    /** A new session on the Connect server at {@code host:port} (plaintext gRPC); each call at most {@code deadlineMs}. */
    public static ConnectMl connect(final String host, final int port, final long deadlineMs) {
        final String target = host + ":" + port;
        return new ConnectMl(target, channel(target), true, System.getProperty("user.name", "switchml"), deadlineMs);
    }

    private static ManagedChannel channel(final String target) {
        return ManagedChannelBuilder.forTarget(target)
                .usePlaintext()
                .maxInboundMessageSize(128 << 20)
                .build();
    }

    /** Another session over the same connection (closing it leaves the connection open). */
    public ConnectMl newSession() {
        return new ConnectMl(target, channel, false, user.getUserId(), deadlineMs);
    }

    /** This session's id. */
    public String sessionId() {
        return sessionId;
    }

    /** A failed Connect call: the server's status and message. */
    public static final class ConnectException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ConnectException(final String message, final Throwable cause) {
            super(message, cause);
        }
    }

    // ---- relations (DataFrames) ----

    private RelationCommon common() {
        return RelationCommon.newBuilder().setPlanId(planIds.incrementAndGet()).build();
    }

    /** {@code spark.read.format(format).load(path)}. */
    public Relation read(final String format, final String path) {
        return Relation.newBuilder()
                .setCommon(common())
                .setRead(Read.newBuilder()
                        .setDataSource(
                                Read.DataSource.newBuilder().setFormat(format).addPaths(path)))
                .build();
    }

    /** {@code df.select(columns...)}. */
    public Relation select(final Relation input, final String... columns) {
        final Project.Builder p = Project.newBuilder().setInput(input);
        for (final String c : columns) {
            p.addExpressions(Expression.newBuilder()
                    .setUnresolvedAttribute(
                            Expression.UnresolvedAttribute.newBuilder().setUnparsedIdentifier(c)));
        }
        return Relation.newBuilder().setCommon(common()).setProject(p).build();
    }

    /** {@code model.transform(input)} of the cached model {@code modelRef}, with the model's params. */
    public Relation transform(final String modelRef, final Map<String, ?> params, final Relation input) {
        return Relation.newBuilder()
                .setCommon(common())
                .setMlRelation(MlRelation.newBuilder()
                        .setTransform(MlRelation.Transform.newBuilder()
                                .setObjRef(ObjectRef.newBuilder().setId(modelRef))
                                .setInput(input)
                                .setParams(params(params))))
                .build();
    }

    /**
     * The rows of {@code relation} ({@code df.collect()}), each as its columns' values as Arrow gives them
     * (a double column: {@link Double}).
     */
    public List<List<Object>> collect(final Relation relation) {
        final List<List<Object>> rows = new ArrayList<>();
        try (BufferAllocator allocator = new RootAllocator()) {
            for (final ExecutePlanResponse r :
                    execute(Plan.newBuilder().setRoot(relation).build())) {
                if (!r.hasArrowBatch()) {
                    continue;
                }
                try (ArrowStreamReader reader = new ArrowStreamReader(
                        new ByteArrayInputStream(r.getArrowBatch().getData().toByteArray()), allocator)) {
                    final VectorSchemaRoot root = reader.getVectorSchemaRoot();
                    while (reader.loadNextBatch()) {
                        for (int i = 0; i < root.getRowCount(); i++) {
                            final List<Object> row = new ArrayList<>();
                            for (final FieldVector v : root.getFieldVectors()) {
                                row.add(v.getObject(i));
                            }
                            rows.add(row);
                        }
                    }
                } catch (final IOException e) {
                    throw new UncheckedIOException("cannot read the server's Arrow batch", e);
                }
            }
        }
        return rows;
    }

    // ---- ML commands ----

    /** PySpark's params of an estimator or model: the values set on it (its {@code _paramMap}), as literals. */
    public static MlParams params(final Map<String, ?> values) {
        final MlParams.Builder b = MlParams.newBuilder();
        values.forEach((k, v) -> b.putParams(k, literal(v)));
        return b.build();
    }

    /** A Python value as PySpark writes it: int (32-bit when it fits), float, str, bool. */
    static Expression.Literal literal(final Object v) {
        final Expression.Literal.Builder l = Expression.Literal.newBuilder();
        if (v instanceof Integer i) {
            return l.setInteger(i).build();
        } else if (v instanceof Long n) {
            return n == n.intValue()
                    ? l.setInteger(n.intValue()).build()
                    : l.setLong(n).build();
        } else if (v instanceof Double d) {
            return l.setDouble(d).build();
        } else if (v instanceof String s) {
            return l.setString(s).build();
        } else if (v instanceof Boolean z) {
            return l.setBoolean(z).build();
        }
        throw new IllegalArgumentException(
                "no literal for " + v + " (" + v.getClass().getName() + ")");
    }

    /**
     * {@code estimator.fit(dataset)}: the estimator named by its server class (as PySpark's {@code _java_obj}),
     * with the client's {@code uid} and params; returns the cached model's reference.
     */
    public String fit(final String estimator, final String uid, final Map<String, ?> params, final Relation dataset) {
        return run(fitCommand(estimator, uid, params, dataset))
                .getOperatorInfo()
                .getObjRef()
                .getId();
    }

    /** The command {@link #fit} sends. */
    public static Command fitCommand(
            final String estimator, final String uid, final Map<String, ?> params, final Relation dataset) {
        return Command.newBuilder()
                .setMlCommand(MlCommand.newBuilder()
                        .setFit(MlCommand.Fit.newBuilder()
                                .setEstimator(MlOperator.newBuilder()
                                        .setName(estimator)
                                        .setUid(uid)
                                        .setType(MlOperator.OperatorType.OPERATOR_TYPE_ESTIMATOR))
                                .setParams(params(params))
                                .setDataset(dataset)))
                .build();
    }

    /**
     * An attribute of a cached object, as PySpark fetches it: {@code ref} is a model's reference, or a chain such
     * as {@code ref.summary} (PySpark's model summary), and {@code method} is called on its end.
     */
    public Expression.Literal fetch(final String ref, final String method) {
        final String[] chain = ref.split("\\.");
        final Fetch.Builder f =
                Fetch.newBuilder().setObjRef(ObjectRef.newBuilder().setId(chain[0]));
        for (int i = 1; i < chain.length; i++) {
            f.addMethods(Fetch.Method.newBuilder().setMethod(chain[i]));
        }
        f.addMethods(Fetch.Method.newBuilder().setMethod(method));
        final MlCommandResult r = run(Command.newBuilder()
                .setMlCommand(MlCommand.newBuilder().setFetch(f))
                .build());
        if (!r.hasParam()) {
            throw new IllegalStateException(
                    ref + "." + method + " answered " + r.getResultTypeCase() + ", not a value");
        }
        return r.getParam();
    }

    /** {@code model.write().overwrite().save(path)} of the cached model, with the model's params. */
    public void save(final String modelRef, final Map<String, ?> params, final String path, final boolean overwrite) {
        run(Command.newBuilder()
                .setMlCommand(MlCommand.newBuilder()
                        .setWrite(MlCommand.Write.newBuilder()
                                .setObjRef(ObjectRef.newBuilder().setId(modelRef))
                                .setParams(params(params))
                                .setPath(path)
                                .setShouldOverwrite(overwrite)))
                .build());
    }

    /** A loaded model (its cache reference) or estimator (no reference), its uid and params. */
    public record Loaded(String ref, String uid, Map<String, Expression.Literal> params) {}

    /** {@code estimator.write().overwrite().save(path)} of a new estimator with the client's uid and params. */
    public void saveEstimator(
            final String estimator,
            final String uid,
            final Map<String, ?> params,
            final String path,
            final boolean overwrite) {
        run(Command.newBuilder()
                .setMlCommand(MlCommand.newBuilder()
                        .setWrite(MlCommand.Write.newBuilder()
                                .setOperator(MlOperator.newBuilder()
                                        .setName(estimator)
                                        .setUid(uid)
                                        .setType(MlOperator.OperatorType.OPERATOR_TYPE_ESTIMATOR))
                                .setParams(params(params))
                                .setPath(path)
                                .setShouldOverwrite(overwrite)))
                .build());
    }

    /** {@code LogisticRegression.load(path)}: the estimator's uid and params as the server loaded them. */
    public Loaded loadEstimator(final String estimator, final String path) {
        final MlCommandResult r = run(Command.newBuilder()
                .setMlCommand(MlCommand.newBuilder()
                        .setRead(MlCommand.Read.newBuilder()
                                .setPath(path)
                                .setOperator(MlOperator.newBuilder()
                                        .setName(estimator)
                                        .setType(MlOperator.OperatorType.OPERATOR_TYPE_ESTIMATOR))))
                .build());
        return new Loaded(
                null,
                r.getOperatorInfo().getUid(),
                r.getOperatorInfo().getParams().getParamsMap());
    }

    /** {@code LogisticRegressionModel.load(path)} (PySpark names the model's server class): the loaded model. */
    public Loaded load(final String modelClass, final String path) {
        final MlCommandResult r = run(Command.newBuilder()
                .setMlCommand(MlCommand.newBuilder()
                        .setRead(MlCommand.Read.newBuilder()
                                .setPath(path)
                                .setOperator(MlOperator.newBuilder()
                                        .setName(modelClass)
                                        .setType(MlOperator.OperatorType.OPERATOR_TYPE_MODEL))))
                .build());
        return new Loaded(
                r.getOperatorInfo().getObjRef().getId(),
                r.getOperatorInfo().getUid(),
                r.getOperatorInfo().getParams().getParamsMap());
    }

    // ---- values ----

    /** A double literal. */
    public static double asDouble(final Expression.Literal l) {
        return l.getDouble();
    }

    /** An integer literal. */
    public static int asInt(final Expression.Literal l) {
        return l.hasLong() ? Math.toIntExact(l.getLong()) : l.getInteger();
    }

    /**
     * The doubles of an array literal (a {@code double[]} attribute such as {@code objectiveHistory}) or of an
     * ML vector (a struct of MLlib's VectorUDT: type, size, indices, values; a sparse one is expanded).
     */
    public static double[] asDoubles(final Expression.Literal l) {
        if (l.hasArray()) {
            final double[] out = new double[l.getArray().getElementsCount()];
            for (int i = 0; i < out.length; i++) {
                out[i] = l.getArray().getElements(i).getDouble();
            }
            return out;
        }
        if (l.hasSpecializedArray() && l.getSpecializedArray().hasDoubles()) {
            return l.getSpecializedArray().getDoubles().getValuesList().stream()
                    .mapToDouble(Double::doubleValue)
                    .toArray();
        }
        if (l.hasStruct()
                && l.getStruct().getStructType().getUdt().getJvmClass().endsWith("VectorUDT")) {
            final List<Expression.Literal> e = l.getStruct().getElementsList();
            final double[] values = asDoubles(e.get(3));
            if (e.get(0).getByte() == 1) { // dense
                return values;
            }
            final double[] dense = new double[asInt(e.get(1))];
            final Expression.Literal indices = e.get(2);
            for (int i = 0; i < values.length; i++) {
                dense[
                                indices.hasArray()
                                        ? indices.getArray().getElements(i).getInteger()
                                        : indices.getSpecializedArray()
                                                .getInts()
                                                .getValues(i)] =
                        values[i];
            }
            return dense;
        }
        throw new IllegalArgumentException("not an array or vector literal: " + l);
    }

    // ---- session ----

    /** {@code spark.conf.unset(key)} for this session. */
    public void unsetConf(final String key) {
        config(ConfigRequest.Operation.newBuilder()
                .setUnset(ConfigRequest.Unset.newBuilder().addKeys(key))
                .build());
    }

    /** {@code spark.conf.get(key, null)} for this session (null when unset). */
    public String getConf(final String key) {
        final var r = config(ConfigRequest.Operation.newBuilder()
                .setGetOption(ConfigRequest.GetOption.newBuilder().addKeys(key))
                .build());
        return r.getPairs(0).hasValue() ? r.getPairs(0).getValue() : null;
    }

    private org.apache.spark.connect.proto.ConfigResponse config(final ConfigRequest.Operation op) {
        try {
            return stub().config(ConfigRequest.newBuilder()
                    .setSessionId(sessionId)
                    .setUserContext(user)
                    .setOperation(op)
                    .build());
        } catch (final StatusRuntimeException e) {
            throw failed("config", e);
        }
    }

    /** {@code spark.interruptAll()}: every running operation of this session; returns the operations interrupted. */
    public List<String> interruptAll() {
        try {
            return stub().interrupt(InterruptRequest.newBuilder()
                            .setSessionId(sessionId)
                            .setUserContext(user)
                            .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_ALL)
                            .build())
                    .getInterruptedIdsList();
        } catch (final StatusRuntimeException e) {
            throw failed("interrupt", e);
        }
    }

    // ---- executions ----

    private SparkConnectServiceGrpc.SparkConnectServiceBlockingStub stub() {
        return stub(channel);
    }

    /** The request that runs {@code plan} as the reattachable operation {@code operationId}. */
    public ExecutePlanRequest request(final Plan plan, final String operationId) {
        return ExecutePlanRequest.newBuilder()
                .setSessionId(sessionId)
                .setUserContext(user)
                .setOperationId(operationId)
                .setPlan(plan)
                .addRequestOptions(ExecutePlanRequest.RequestOption.newBuilder()
                        .setReattachOptions(ReattachOptions.newBuilder().setReattachable(true)))
                .build();
    }

    /** Runs an ML command and returns its result. */
    public MlCommandResult run(final Command command) {
        for (final ExecutePlanResponse r :
                execute(Plan.newBuilder().setCommand(command).build())) {
            if (r.hasMlCommandResult()) {
                return r.getMlCommandResult();
            }
        }
        throw new IllegalStateException(
                "the server answered " + command.getMlCommand().getCommandCase() + " without an ML result");
    }

    /**
     * Runs {@code plan} to the end and returns its responses: a stream the server closes before the result is
     * complete is reattached from the last response, and the finished operation is released.
     */
    public List<ExecutePlanResponse> execute(final Plan plan) {
        try {
            return drain(channel, plan, UUID.randomUUID().toString(), null);
        } catch (final StatusRuntimeException e) {
            throw failed(
                    plan.hasCommand()
                            ? plan.getCommand().getMlCommand().getCommandCase().toString()
                            : "query",
                    e);
        }
    }

    /** {@link #execute} over {@code ch} as operation {@code op}; stops reattaching once {@code gone} is set. */
    private List<ExecutePlanResponse> drain(
            final ManagedChannel ch,
            final Plan plan,
            final String op,
            final java.util.concurrent.atomic.AtomicBoolean gone) {
        final List<ExecutePlanResponse> all = new ArrayList<>();
        Iterator<ExecutePlanResponse> it = stub(ch).executePlan(request(plan, op));
        while (true) {
            boolean complete = false;
            while (it.hasNext()) {
                final ExecutePlanResponse r = it.next();
                all.add(r);
                complete |= r.hasResultComplete();
            }
            if (complete) {
                break;
            }
            if (gone != null && gone.get()) {
                throw new ConnectException("the client left operation " + op, null);
            }
            // The server ends a stream after spark.connect.execute.reattachable.senderMaxStreamDuration: reattach.
            final ReattachExecuteRequest.Builder again = ReattachExecuteRequest.newBuilder()
                    .setSessionId(sessionId)
                    .setUserContext(user)
                    .setOperationId(op);
            if (!all.isEmpty()) {
                again.setLastResponseId(all.get(all.size() - 1).getResponseId());
            }
            it = stub(ch).reattachExecute(again.build());
        }
        stub(ch).releaseExecute(ReleaseExecuteRequest.newBuilder()
                .setSessionId(sessionId)
                .setUserContext(user)
                .setOperationId(op)
                .setReleaseAll(ReleaseExecuteRequest.ReleaseAll.getDefaultInstance())
                .build());
        return all;
    }

    private SparkConnectServiceGrpc.SparkConnectServiceBlockingStub stub(final ManagedChannel ch) {
        return SparkConnectServiceGrpc.newBlockingStub(ch).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts {@code plan} as the reattachable operation {@code operationId}, over a connection of its own so that
     * {@link Started#abandon()} can drop the client as a crashed one would (the server then keeps the operation
     * until its detach timeout); {@link Started#await()} follows it to its end, reattaching as {@link #execute}.
     */
    public Started start(final Plan plan, final String operationId) {
        final ManagedChannel own = channel(target);
        final java.util.concurrent.atomic.AtomicBoolean gone = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.CompletableFuture<List<ExecutePlanResponse>> run =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return drain(own, plan, operationId, gone);
                    } catch (final StatusRuntimeException e) {
                        throw failed("execution", e);
                    } finally {
                        own.shutdownNow();
                    }
                });
        return new Started(own, gone, run);
    }

    /** An execution started by {@link #start}: its responses, and its connection. */
    public static final class Started {
        private final ManagedChannel channel;
        private final java.util.concurrent.atomic.AtomicBoolean gone;
        private final java.util.concurrent.CompletableFuture<List<ExecutePlanResponse>> run;

        Started(
                final ManagedChannel channel,
                final java.util.concurrent.atomic.AtomicBoolean gone,
                final java.util.concurrent.CompletableFuture<List<ExecutePlanResponse>> run) {
            this.channel = channel;
            this.gone = gone;
            this.run = run;
        }

        /** Waits for the operation's end (within the calls' deadlines); a failed operation throws. */
        public List<ExecutePlanResponse> await() {
            try {
                return run.join();
            } catch (final java.util.concurrent.CompletionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : e;
            }
        }

        /** Drops the connection at once, without telling the server, and never reattaches: a client that is gone. */
        public void abandon() {
            gone.set(true);
            channel.shutdownNow();
        }
    }

    private static ConnectException failed(final String what, final StatusRuntimeException e) {
        final String d = e.getStatus().getDescription();
        return new ConnectException(what + ": " + e.getStatus().getCode() + (d == null ? "" : ": " + d), e);
    }

    @Override
    public void close() {
        if (ownsChannel) {
            channel.shutdownNow();
            try {
                channel.awaitTermination(10, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
