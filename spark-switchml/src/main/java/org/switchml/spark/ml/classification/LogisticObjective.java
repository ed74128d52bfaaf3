package org.switchml.spark.ml.classification;

import org.apache.spark.broadcast.Broadcast;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The logistic regression objective in MLlib 4.0.1's training space, in plain Java: binomial or
 * multinomial log loss over the features scaled by 1/std (not centered), weighted and averaged over the
 * weight sum, with "virtual centering" when fitting with the mean (as MLlib's
 * Binary/MultinomialLogisticBlockAggregator do) and L2 regularization that skips the intercepts and, when
 * {@code standardization} is off, penalizes each coefficient as if the data were unscaled.
 *
 * <p>The {@link InstanceBatch}es hold the features unscaled: the scaling is applied to the coefficients
 * once per evaluation ({@code x_j / std_j * w_j = x_j * (w_j / std_j)}) and to the gradient sums once
 * per partition, which is the same function at no cost per entry, and lets the statistics and the fit
 * share one cached copy of the input.
 *
 * <p>Coefficients are laid out as MLlib trains them: binomial {@code [w_0 .. w_{F-1}, b]}; multinomial
 * column-major {@code (class k, feature j) -> j * K + k}, the K intercepts last.
 *
 * <p>Each partition contributes {@link #contribution} = {@code [gradient sum (dim), loss sum, weight sum,
 * non-finite flag]}; the element-wise sum over partitions goes to {@link #valueAndGradient}. A partition
 * whose loss or gradient is not finite sends zeros and the flag, so that the allreduce only ever carries
 * finite numbers; the objective is then +infinity (the line search shortens its step, as in MLlib). The
 * flag is 2^1000: the largest value of its quantization block, so no encoding can round it away (the
 * evaluation is discarded anyway), and up to 2^23 of them (one per task) still sum to a finite number.
 */
public final class LogisticObjective implements Serializable {
    private static final long serialVersionUID = 1L;

    private final int numFeatures;
    private final int numClasses;
    private final boolean multinomial;
    private final boolean fitIntercept;
    private final boolean fitWithMean;
    private transient double[] inverseStd;
    private transient double[] scaledMean;
    private final double regL2;
    private final boolean standardization;
    private transient double[] featuresStd;
    /** Under which each executor kept the statistics ({@link ExecutorStatistics}); null: they travel along. */
    private final String statisticsKey;
    /** The statistics for an executor that did not keep them; null when they travel along. */
    private final Broadcast<MeanStd> statistics;

    /** BLAS for the dense batches (the JDK's Vector API, or native, as MLlib's own aggregators get). */
    private static final dev.ludovic.netlib.blas.BLAS BLAS = dev.ludovic.netlib.blas.BLAS.getInstance();

    /** What a partition with a non-finite loss or gradient puts in the flag element. */
    static final double NON_FINITE = 0x1p1000;

    /**
     * @param numFeatures     F
     * @param numClasses      K (2 for binomial)
     * @param multinomial     softmax over K coefficient sets, else one binomial set
     * @param fitIntercept    whether there are intercepts
     * @param fitWithMean     virtual centering (needs fitIntercept and unbounded intercepts)
     * @param inverseStd      1 / std_j (0 where std is 0)
     * @param scaledMean      mean_j / std_j (0 where std is 0); used only with fitWithMean
     * @param regL2           (1 - elasticNet) * regParam
     * @param standardization MLlib's standardization param (L2 on scaled coefficients)
     * @param featuresStd     std_j, for the L2 term without standardization
     */
    public LogisticObjective(final int numFeatures, final int numClasses, final boolean multinomial,
                             final boolean fitIntercept, final boolean fitWithMean, final double[] inverseStd,
                             final double[] scaledMean, final double regL2, final boolean standardization,
                             final double[] featuresStd) {
        this(numFeatures, numClasses, multinomial, fitIntercept, fitWithMean, inverseStd, scaledMean, regL2,
                standardization, featuresStd, null, null);
    }

    private LogisticObjective(final int numFeatures, final int numClasses, final boolean multinomial,
                              final boolean fitIntercept, final boolean fitWithMean, final double[] inverseStd,
                              final double[] scaledMean, final double regL2, final boolean standardization,
                              final double[] featuresStd, final String statisticsKey,
                              final Broadcast<MeanStd> statistics) {
        if (fitWithMean && (!fitIntercept || scaledMean == null || scaledMean.length != numFeatures)) {
            throw new IllegalArgumentException("fitting with the mean needs an intercept and " + numFeatures
                    + " scaled means");
        }
        if (!multinomial && numClasses > 2) {
            throw new IllegalArgumentException("binomial needs at most 2 classes, got " + numClasses);
        }
        this.numFeatures = numFeatures;
        this.numClasses = numClasses;
        this.multinomial = multinomial;
        this.fitIntercept = fitIntercept;
        this.fitWithMean = fitWithMean;
        if (inverseStd.length != numFeatures) {
            throw new IllegalArgumentException("inverseStd has length " + inverseStd.length + ", expected " + numFeatures);
        }
        this.inverseStd = inverseStd;
        this.scaledMean = scaledMean;
        this.regL2 = regL2;
        this.standardization = standardization;
        this.featuresStd = featuresStd;
        this.statisticsKey = statisticsKey;
        this.statistics = statistics;
    }

    /**
     * The objective for the feature statistics {@code mean} and {@code std} of a statistics stage that kept
     * them on each executor under {@code statisticsKey} ({@link FeatureSummary#FeatureSummary(int, int,
     * String)}). Serialized, it carries neither: each executor derives its arrays from what it kept, or from
     * {@code statistics} when it kept nothing under that key. Every side derives them with {@link #derived},
     * so every copy is bit-identical.
     *
     * @param statisticsKey the statistics stage's key
     * @param statistics    {@code mean} and {@code std}, broadcast
     */
    static LogisticObjective fromStatistics(final int numFeatures, final int numClasses, final boolean multinomial,
                                            final boolean fitIntercept, final boolean fitWithMean,
                                            final double[] mean, final double[] std, final double regL2,
                                            final boolean standardization, final String statisticsKey,
                                            final Broadcast<MeanStd> statistics) {
        final double[][] d = derived(mean, std);
        return new LogisticObjective(numFeatures, numClasses, multinomial, fitIntercept, fitWithMean, d[0], d[1],
                regL2, standardization, d[2], statisticsKey, statistics);
    }

    /** {@code {1 / std_j (0 where std is 0), mean_j / std_j (likewise), std_j}}: the objective's arrays. */
    static double[][] derived(final double[] mean, final double[] std) {
        final double[] inverseStd = new double[std.length];
        final double[] scaledMean = new double[std.length];
        for (int j = 0; j < std.length; j++) {
            inverseStd[j] = std[j] != 0 ? 1.0 / std[j] : 0.0;
            scaledMean[j] = inverseStd[j] * mean[j];
        }
        return new double[][] {inverseStd, scaledMean, std};
    }

    private void writeObject(final ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
        if (statisticsKey == null) {
            out.writeObject(inverseStd);
            out.writeObject(scaledMean);
            out.writeObject(featuresStd);
        }
    }

    private void readObject(final ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        if (statisticsKey == null) {
            inverseStd = (double[]) in.readObject();
            scaledMean = (double[]) in.readObject();
            featuresStd = (double[]) in.readObject();
            return;
        }
        MeanStd kept = ExecutorStatistics.kept(statisticsKey);
        if (kept == null) {
            ExecutorStatistics.missed();
            kept = statistics.value();
        }
        final double[][] d = derived(kept.mean(), kept.std());
        inverseStd = d[0];
        scaledMean = d[1];
        featuresStd = d[2];
    }

    /** The per-feature {@code 1 / std_j} this copy computes with (tests compare copies). */
    double[] inverseStd() {
        return inverseStd;
    }

    /** Coefficient sets: K for multinomial, 1 for binomial. */
    public int coefficientSets() {
        return multinomial ? numClasses : 1;
    }

    /** Number of coefficients, intercepts included. */
    public int dim() {
        return coefficientSets() * (numFeatures + (fitIntercept ? 1 : 0));
    }

    /** Length of a partition's contribution: gradient, loss sum, weight sum, non-finite flag. */
    public int vectorLength() {
        return dim() + 3;
    }

    /** Whether the fit uses virtual centering. */
    public boolean fitWithMean() {
        return fitWithMean;
    }

    // ------------------------------------------------------------------ per partition

    /**
     * What every partition's evaluation at one point needs before it reads its rows: the coefficients as
     * the unscaled features see them ({@code w_j / std_j}) and the margin of an all-zero row. It depends
     * only on the point, so the tasks of one executor can share it.
     */
    public static final class Prepared {
        final double[] effective;
        final double[] offset;
        private final int sets;
        private double[] transposed;

        Prepared(final double[] effective, final double[] offset, final int sets) {
            this.effective = effective;
            this.offset = offset;
            this.sets = sets;
        }

        /**
         * The effective coefficients as a F x K column-major matrix ({@code c * F + j}), for the dense
         * kernel; made on first use (only dense batches need it).
         */
        synchronized double[] transposed() {
            if (transposed == null) {
                final int f = effective.length / sets;
                final double[] t = new double[effective.length];
                for (int j = 0; j < f; j++) {
                    for (int c = 0; c < sets; c++) {
                        t[c * f + j] = effective[j * sets + c];
                    }
                }
                transposed = t;
            }
            return transposed;
        }
    }

    /** {@link Prepared} for the point {@code coef} (one sweep over the coefficients). */
    public Prepared prepare(final double[] coef) {
        return prepare(coef, null);
    }

    /**
     * {@link Prepared} for the point {@code coef}, its effective coefficients written into {@code spare} when
     * that is an array of the right length (every element is overwritten), else into a new one.
     */
    public Prepared prepare(final double[] coef, final double[] spare) {
        final int sets = coefficientSets();
        final int f = numFeatures;
        final double[] effective = spare != null && spare.length == f * sets ? spare : new double[f * sets];
        for (int j = 0; j < f; j++) {
            final double inv = inverseStd[j];
            for (int c = 0; c < sets; c++) {
                effective[j * sets + c] = coef[j * sets + c] * inv;
            }
        }
        final double[] offset = multinomial ? multinomialOffset(coef) : new double[] {binaryOffset(coef)};
        return new Prepared(effective, offset, sets);
    }

    /** A partition's gradient sum, loss sum and weight sum at {@code coef}. */
    public double[] contribution(final Iterable<InstanceBatch> batches, final double[] coef) {
        return contribution(batches, prepare(coef));
    }

    /** A partition's gradient sum, loss sum and weight sum at the point {@code p} was prepared for. */
    public double[] contribution(final Iterable<InstanceBatch> batches, final Prepared p) {
        return contribution(batches, p, null);
    }

    /**
     * As {@link #contribution(Iterable, Prepared)}, into {@code spare} (zeroed first) when that is an array
     * of length {@link #vectorLength()}, else into a new array.
     */
    public double[] contribution(final Iterable<InstanceBatch> batches, final Prepared p, final double[] spare) {
        final int dim = dim();
        final int sets = coefficientSets();
        final int f = numFeatures;
        final double[] out;
        if (spare != null && spare.length == dim + 3) {
            out = spare;
            Arrays.fill(out, 0.0);
        } else {
            out = new double[dim + 3];
        }
        final double[] lossAndWeight = new double[2];
        final double[] multiplierSum = new double[sets];
        // Runs of sparse batches go through column blocks, dense batches one by one, in batch order.
        final List<InstanceBatch> run = new ArrayList<>();
        int runRows = 0;
        final int blockRows = ColumnBlock.rowsFor(sets);
        double[] denseGrad = null;
        for (final InstanceBatch b : batches) {
            checkFeatures(b);
            if (b.indices != null) {
                run.add(b);
                runRows += b.rows;
                if (runRows >= blockRows) {
                    addSparse(ColumnBlock.of(run), p, out, lossAndWeight, multiplierSum);
                    run.clear();
                    runRows = 0;
                }
                continue;
            }
            if (!run.isEmpty()) {
                addSparse(ColumnBlock.of(run), p, out, lossAndWeight, multiplierSum);
                run.clear();
                runRows = 0;
            }
            if (multinomial) {
                // dense batches accumulate their gradient F x K column-major (see addMultinomialDense)
                if (denseGrad == null) {
                    denseGrad = new double[f * sets];
                }
                addMultinomialDense(b, p.transposed(), p.offset, denseGrad, lossAndWeight, multiplierSum);
            } else {
                addBinaryDense(b, p.effective, p.offset[0], out, lossAndWeight, multiplierSum);
            }
        }
        if (!run.isEmpty()) {
            addSparse(ColumnBlock.of(run), p, out, lossAndWeight, multiplierSum);
        }
        if (denseGrad != null) {
            for (int j = 0; j < f; j++) {
                for (int c = 0; c < sets; c++) {
                    out[j * sets + c] += denseGrad[c * f + j];
                }
            }
        }
        // One sweep: back to the training space (d/dw_j of x_j / std_j * w_j), then, when fitting with the
        // mean, subtract what centering would have removed (the data were not centered), and check that
        // every element is finite.
        boolean finite = true;
        if (fitWithMean) {
            for (int j = 0; j < f; j++) {
                final double inv = inverseStd[j];
                final double mu = scaledMean[j];
                for (int c = 0; c < sets; c++) {
                    final int i = j * sets + c;
                    final double g = out[i] * inv + -multiplierSum[c] * mu;
                    out[i] = g;
                    finite &= Double.isFinite(g);
                }
            }
        } else {
            for (int j = 0; j < f; j++) {
                final double inv = inverseStd[j];
                for (int c = 0; c < sets; c++) {
                    final int i = j * sets + c;
                    final double g = out[i] * inv;
                    out[i] = g;
                    finite &= Double.isFinite(g);
                }
            }
        }
        if (fitIntercept) {
            for (int c = 0; c < sets; c++) {
                out[f * sets + c] += multiplierSum[c];
                finite &= Double.isFinite(out[f * sets + c]);
            }
        }
        out[dim] = lossAndWeight[0];
        out[dim + 1] = lossAndWeight[1];
        finite &= Double.isFinite(out[dim]);
        if (!finite) {
            Arrays.fill(out, 0, dim + 1, 0.0);
            out[dim + 2] = NON_FINITE;
        }
        return out;
    }

    /** The margin of an all-zero row: the intercept, minus the centering term when fitting with the mean. */
    private double binaryOffset(final double[] coef) {
        if (!fitIntercept) {
            return 0.0;
        }
        if (!fitWithMean) {
            return coef[numFeatures];
        }
        double dot = 0.0;
        for (int j = 0; j < numFeatures; j++) {
            dot += coef[j] * scaledMean[j];
        }
        return coef[numFeatures] - dot;
    }

    private double[] multinomialOffset(final double[] coef) {
        final int k = numClasses;
        final double[] offset = new double[k];
        if (!fitIntercept) {
            return offset;
        }
        final int base = numFeatures * k;
        for (int c = 0; c < k; c++) {
            offset[c] = coef[base + c];
        }
        if (fitWithMean) {
            final double[] dot = new double[k];
            for (int j = 0; j < numFeatures; j++) {
                final double mu = scaledMean[j];
                for (int c = 0; c < k; c++) {
                    dot[c] += coef[j * k + c] * mu;
                }
            }
            for (int c = 0; c < k; c++) {
                offset[c] += -1.0 * dot[c];
            }
        }
        return offset;
    }

    /**
     * A thread's margins array for column blocks, reused: a block's margins are about 2 MB, which the JVM
     * allocates outside the young generation, and one new array per block and evaluation starts a
     * concurrent collection cycle nearly every evaluation once the optimizer state fills the heap.
     */
    private static final ThreadLocal<double[]> MARGINS = new ThreadLocal<>();

    /** At least {@code length} elements (only those are used; the caller initializes them). */
    private static double[] margins(final int length) {
        double[] m = MARGINS.get();
        if (m == null || m.length < length) {
            m = new double[length];
            MARGINS.set(m);
        }
        return m;
    }

    private void addSparse(final ColumnBlock block, final Prepared p, final double[] grad,
                           final double[] lossAndWeight, final double[] multiplierSums) {
        if (multinomial) {
            addMultinomial(block, p.effective, p.offset, grad, lossAndWeight, multiplierSums);
        } else {
            addBinary(block, p.effective, p.offset[0], grad, lossAndWeight, multiplierSums);
        }
    }

    /**
     * Adds a block of sparse rows' loss, weight, unscaled gradient sum and multiplier sum ({@code coef}:
     * effective): margins by column, then each row's multiplier (the loss and the sums batch by batch, in
     * row order), then the gradient by column. Rows of weight 0 and rows whose multiplier is 0 add
     * {@code ±0} terms, which leave every sum's bits as if they were skipped.
     */
    private void addBinary(final ColumnBlock block, final double[] coef, final double offset, final double[] grad,
                           final double[] lossAndWeight, final double[] multiplierSums) {
        final double[] m = margins(block.rows);
        Arrays.fill(m, 0, block.rows, offset);
        final int[] columns = block.columns;
        final int[] start = block.columnStart;
        final int[] rowIndex = block.rowIndex;
        final double[] values = block.values;
        for (int i = 0; i < columns.length; i++) {
            final double w = coef[columns[i]];
            for (int q = start[i]; q < start[i + 1]; q++) {
                m[rowIndex[q]] += values[q] * w;
            }
        }
        int g = 0;
        for (final InstanceBatch b : block.batches) {
            binaryMultipliers(b, m, g, lossAndWeight, multiplierSums);
            g += b.rows;
        }
        for (int i = 0; i < columns.length; i++) {
            final int j = columns[i];
            double sum = grad[j];
            for (int q = start[i]; q < start[i + 1]; q++) {
                sum += m[rowIndex[q]] * values[q];
            }
            grad[j] = sum;
        }
    }

    /**
     * A dense batch through BLAS: margins {@code X w} (one GEMV), then {@code X^T multipliers} into the
     * gradient (another). The result is summed with the other partitions', so it needs no bit-for-bit
     * reproducibility across machines; only the update after the allreduce does.
     */
    private void addBinaryDense(final InstanceBatch b, final double[] coef, final double offset, final double[] grad,
                                final double[] lossAndWeight, final double[] multiplierSums) {
        final int f = numFeatures;
        final int rows = b.rows;
        final double[] m = new double[rows];
        Arrays.fill(m, offset);
        BLAS.dgemv("T", f, rows, 1.0, b.values, f, coef, 1, 1.0, m, 1);
        if (binaryMultipliers(b, m, 0, lossAndWeight, multiplierSums)) {
            BLAS.dgemv("N", f, rows, 1.0, b.values, f, m, 1, 1.0, grad, 1);
        }
    }

    /**
     * A batch's rows from margins to multipliers in place (row r's margin at {@code m[o + r]}; rows of weight
     * 0 get 0), adding the batch's loss, weight and multiplier sums (each summed over the batch first).
     * Returns whether any multiplier is non-zero.
     */
    private static boolean binaryMultipliers(final InstanceBatch b, final double[] m, final int o,
                                             final double[] lossAndWeight, final double[] multiplierSums) {
        double loss = 0.0;
        double weightSum = 0.0;
        double multiplierSum = 0.0;
        boolean any = false;
        for (int r = 0; r < b.rows; r++) {
            final double w = b.weights[r];
            weightSum += w;
            if (!(w > 0)) {
                m[o + r] = 0.0;
                continue;
            }
            final double margin = m[o + r];
            loss += binaryLoss(w, b.labels[r], margin);
            final double multiplier = binaryMultiplier(w, b.labels[r], margin);
            m[o + r] = multiplier;
            multiplierSum += multiplier;
            any |= multiplier != 0.0;
        }
        multiplierSums[0] += multiplierSum;
        lossAndWeight[0] += loss;
        lossAndWeight[1] += weightSum;
        return any;
    }

    private static double binaryLoss(final double w, final double label, final double margin) {
        return label > 0 ? w * log1pExp(-margin) : w * (log1pExp(-margin) + margin);
    }

    private static double binaryMultiplier(final double w, final double label, final double margin) {
        return w * (1.0 / (1.0 + Math.exp(-margin)) - label);
    }

    /** As {@link #addBinary} for the softmax (dense batches: {@link #addMultinomialDense}). */
    private void addMultinomial(final ColumnBlock block, final double[] coef, final double[] offset,
                                final double[] grad, final double[] lossAndWeight, final double[] multiplierSums) {
        final int k = numClasses;
        final double[] m = margins(block.rows * k);
        for (int r = 0; r < block.rows; r++) {
            System.arraycopy(offset, 0, m, r * k, k);
        }
        final int[] columns = block.columns;
        final int[] start = block.columnStart;
        final int[] rowIndex = block.rowIndex;
        final double[] values = block.values;
        for (int i = 0; i < columns.length; i++) {
            final int cj = columns[i] * k;
            for (int q = start[i]; q < start[i + 1]; q++) {
                final double x = values[q];
                final int o = rowIndex[q] * k;
                for (int c = 0; c < k; c++) {
                    m[o + c] += x * coef[cj + c];
                }
            }
        }
        int g = 0;
        for (final InstanceBatch b : block.batches) {
            multinomialMultipliers(b, m, g, k, lossAndWeight, multiplierSums);
            g += b.rows;
        }
        for (int i = 0; i < columns.length; i++) {
            final int cj = columns[i] * k;
            for (int q = start[i]; q < start[i + 1]; q++) {
                final double x = values[q];
                final int o = rowIndex[q] * k;
                for (int c = 0; c < k; c++) {
                    grad[cj + c] += x * m[o + c];
                }
            }
        }
    }

    /**
     * A dense batch through BLAS, with the coefficients and the gradient as F x K column-major matrices
     * ({@code c * F + j}) and the rows a F x R column-major one: the margins (K x R, each row's K classes
     * contiguous) are {@code coef^T rows} (one GEMM of dot products along the features), and the gradient
     * {@code += rows x multipliers^T} (another, streaming along the features). Both run about twice as
     * fast through the Java BLAS as the K x F layout, whose inner loops run over the K = 10 classes.
     */
    private void addMultinomialDense(final InstanceBatch b, final double[] coefT, final double[] offset,
                                     final double[] gradT, final double[] lossAndWeight,
                                     final double[] multiplierSums) {
        final int f = numFeatures;
        final int k = numClasses;
        final int rows = b.rows;
        final double[] m = new double[rows * k];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(offset, 0, m, r * k, k);
        }
        BLAS.dgemm("T", "N", k, rows, f, 1.0, coefT, f, b.values, f, 1.0, m, k);
        multinomialMultipliers(b, m, 0, k, lossAndWeight, multiplierSums);
        BLAS.dgemm("N", "T", f, k, rows, 1.0, b.values, f, m, k, 1.0, gradT, f);
    }

    /** {@link #binaryMultipliers} for the softmax: row r's K margins at {@code m[(o + r) * k ..]}. */
    private static void multinomialMultipliers(final InstanceBatch b, final double[] m, final int o, final int k,
                                               final double[] lossAndWeight, final double[] multiplierSums) {
        final double[] multiplierSum = new double[k];
        double loss = 0.0;
        double weightSum = 0.0;
        for (int r = 0; r < b.rows; r++) {
            final double w = b.weights[r];
            weightSum += w;
            final int at = (o + r) * k;
            if (!(w > 0)) {
                Arrays.fill(m, at, at + k, 0.0);
                continue;
            }
            loss += multipliers(m, at, k, w, (int) b.labels[r], multiplierSum);
        }
        for (int c = 0; c < k; c++) {
            multiplierSums[c] += multiplierSum[c];
        }
        lossAndWeight[0] += loss;
        lossAndWeight[1] += weightSum;
    }

    /**
     * Turns one row's margins ({@code m[o .. o+k)}) into its multipliers {@code w (p - onehot(label))},
     * adds them to {@code multiplierSum}, and returns the row's loss {@code -w log p_label}.
     */
    private static double multipliers(final double[] m, final int o, final int k, final double w, final int label,
                                      final double[] multiplierSum) {
        softmax(m, o, k);
        final double loss = -w * Math.log(m[o + label]);
        if (w != 1) {
            for (int c = 0; c < k; c++) {
                m[o + c] *= w;
            }
        }
        m[o + label] -= w;
        for (int c = 0; c < k; c++) {
            multiplierSum[c] += m[o + c];
        }
        return loss;
    }

    private void checkFeatures(final InstanceBatch b) {
        if (b.numFeatures != numFeatures) {
            throw new IllegalArgumentException("Dimensions mismatch when adding new instance. Expecting "
                    + numFeatures + " but got " + b.numFeatures + ".");
        }
    }

    /** log(1 + exp(x)) without overflow. */
    static double log1pExp(final double x) {
        return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
    }

    /** In-place softmax, stable against overflow; a +infinity margin takes all the mass. */
    static void softmax(final double[] m) {
        softmax(m, 0, m.length);
    }

    /** {@link #softmax(double[])} of {@code m[o .. o+k)}. */
    static void softmax(final double[] m, final int o, final int k) {
        double max = -Double.MAX_VALUE;
        for (int c = o; c < o + k; c++) {
            if (m[c] == Double.POSITIVE_INFINITY) {
                Arrays.fill(m, o, o + k, 0.0);
                m[c] = 1.0;
                return;
            }
            if (m[c] > max) {
                max = m[c];
            }
        }
        double sum = 0.0;
        for (int c = o; c < o + k; c++) {
            final double e = Math.exp(m[c] - max);
            m[c] = e;
            sum += e;
        }
        final double inv = 1.0 / sum;
        for (int c = o; c < o + k; c++) {
            m[c] *= inv;
        }
    }

    // ------------------------------------------------------------------ after the allreduce

    /**
     * The objective at {@code coef} from the summed contributions: the weighted mean loss plus the L2
     * term; writes the gradient into {@code grad}. +infinity (and a NaN gradient) if any partition's loss
     * or gradient was not finite, or if the weight sum did not survive the switch's quantization beside a
     * huge loss.
     */
    public double valueAndGradient(final double[] sum, final double[] coef, final double[] grad) {
        final int dim = dim();
        if (sum.length != dim + 3) {
            throw new IllegalArgumentException("sum has length " + sum.length + ", expected " + (dim + 3));
        }
        if (sum[dim + 2] >= NON_FINITE / 2) {
            Arrays.fill(grad, Double.NaN);
            return Double.POSITIVE_INFINITY;
        }
        final double weightSum = sum[dim + 1];
        if (!(weightSum > 0.0)) {
            // The statistics already found a positive weight sum (the fit fails before the loop
            // otherwise): here it was rounded away beside a huge (finite) loss in its quantization
            // block. The evaluation is unusable, as one with a non-finite loss: the line search
            // shortens its step.
            Arrays.fill(grad, Double.NaN);
            return Double.POSITIVE_INFINITY;
        }
        final double scale = 1.0 / weightSum;
        if (regL2 == 0.0 || !standardization) {
            for (int i = 0; i < dim; i++) {
                grad[i] = sum[i] * scale;
            }
            return sum[dim] / weightSum + addL2(coef, grad);
        }
        // the common case in one sweep (the same bits as the mean, then addL2)
        final int applied = numFeatures * coefficientSets();
        double l2 = 0.0;
        for (int j = 0; j < applied; j++) {
            final double c = coef[j];
            l2 += c * c;
            grad[j] = sum[j] * scale + c * regL2;
        }
        for (int i = applied; i < dim; i++) {
            grad[i] = sum[i] * scale;
        }
        return sum[dim] / weightSum + 0.5 * l2 * regL2;
    }

    /** Adds the L2 gradient to {@code grad}; returns the L2 value. Intercepts are not penalized. */
    double addL2(final double[] coef, final double[] grad) {
        if (regL2 == 0.0) {
            return 0.0;
        }
        final int sets = coefficientSets();
        final int applied = numFeatures * sets;
        double sum = 0.0;
        for (int j = 0; j < applied; j++) {
            final double c = coef[j];
            if (standardization) {
                sum += c * c;
                grad[j] += c * regL2;
            } else {
                final double std = featuresStd[j / sets];
                if (std != 0.0) {
                    final double t = c / (std * std);
                    sum += c * t;
                    grad[j] += regL2 * t;
                }
            }
        }
        return 0.5 * sum * regL2;
    }

    // ------------------------------------------------------------------ start and end of a fit

    /**
     * MLlib's initial solution: zeros, intercepts from the label distribution (binomial
     * {@code log(h1/h0)}, multinomial centered {@code log1p(h_k)}), or the given model's coefficients
     * scaled into the training space; clipped into the bounds. Not yet shifted for virtual centering
     * (see {@link #toCentered}).
     *
     * @param histogram     label weight sums
     * @param initialCoef   the initial model's coefficients (K x F row-major) or null
     * @param initialInt    the initial model's intercepts or null
     * @param lower         lower bounds in the training space or null
     * @param upper         upper bounds in the training space or null
     */
    public double[] initialSolution(final double[] histogram, final double[] initialCoef, final double[] initialInt,
                                    final double[] lower, final double[] upper) {
        final int sets = coefficientSets();
        final double[] x = new double[dim()];
        if (initialCoef != null) {
            for (int c = 0; c < sets; c++) {
                for (int j = 0; j < numFeatures; j++) {
                    x[j * sets + c] = initialCoef[c * numFeatures + j] * featuresStd[j];
                }
            }
            if (fitIntercept) {
                for (int c = 0; c < sets; c++) {
                    if (initialInt[c] != 0.0) {
                        x[numFeatures * sets + c] = initialInt[c];
                    }
                }
            }
        } else if (fitIntercept && multinomial) {
            final double[] raw = new double[histogram.length];
            double mean = 0.0;
            for (int c = 0; c < raw.length; c++) {
                raw[c] = Math.log1p(histogram[c]);
                mean += raw[c];
            }
            mean /= raw.length;
            for (int c = 0; c < raw.length; c++) {
                x[numFeatures * sets + c] = raw[c] - mean;
            }
        } else if (fitIntercept) {
            final double h0 = histogram.length > 0 ? histogram[0] : 0.0;
            final double h1 = histogram.length > 1 ? histogram[1] : 0.0;
            x[numFeatures] = Math.log(h1 / h0);
        }
        if (lower != null) {
            for (int i = 0; i < x.length; i++) {
                if (x[i] < lower[i]) {
                    x[i] = lower[i];
                } else if (x[i] > upper[i]) {
                    x[i] = upper[i];
                }
            }
        }
        return x;
    }

    /** Moves a solution of the uncentered problem to the centered one (intercepts += W . scaledMean). */
    public void toCentered(final double[] x) {
        shiftIntercepts(x, 1.0);
    }

    /** Moves a solution of the centered problem back (intercepts -= W . scaledMean). */
    public void fromCentered(final double[] x) {
        shiftIntercepts(x, -1.0);
    }

    private void shiftIntercepts(final double[] x, final double sign) {
        if (!fitWithMean) {
            return;
        }
        final int sets = coefficientSets();
        final double[] adapt = new double[sets];
        for (int j = 0; j < numFeatures; j++) {
            for (int c = 0; c < sets; c++) {
                adapt[c] += x[j * sets + c] * scaledMean[j];
            }
        }
        for (int c = 0; c < sets; c++) {
            x[numFeatures * sets + c] += sign * adapt[c];
        }
    }

    /**
     * The model in the original space: coefficients (K x F, row-major) divided by std (0 where std is
     * 0) and the intercepts; multinomial coefficients are centered over the classes when unregularized
     * and unbounded, and multinomial intercepts when unbounded, as MLlib does.
     *
     * @return {coefficients (sets x F row-major), intercepts (sets)}
     */
    public double[][] toModel(final double[] x, final boolean unregularized, final boolean bounded) {
        final int sets = coefficientSets();
        final double[] coefficients = new double[sets * numFeatures];
        final double[] intercepts = new double[sets];
        for (int j = 0; j < numFeatures; j++) {
            for (int c = 0; c < sets; c++) {
                if (featuresStd[j] != 0.0) {
                    coefficients[c * numFeatures + j] = x[j * sets + c] / featuresStd[j];
                }
            }
        }
        if (fitIntercept) {
            for (int c = 0; c < sets; c++) {
                intercepts[c] = x[numFeatures * sets + c];
            }
        }
        if (unregularized && multinomial && !bounded) {
            final double[] centers = new double[numFeatures];
            for (int c = 0; c < sets; c++) {
                for (int j = 0; j < numFeatures; j++) {
                    centers[j] += coefficients[c * numFeatures + j];
                }
            }
            for (int j = 0; j < numFeatures; j++) {
                centers[j] /= sets;
            }
            for (int c = 0; c < sets; c++) {
                for (int j = 0; j < numFeatures; j++) {
                    coefficients[c * numFeatures + j] -= centers[j];
                }
            }
        }
        if (fitIntercept && multinomial && !bounded) {
            double mean = 0.0;
            for (final double b : intercepts) {
                mean += b;
            }
            mean /= sets;
            for (int c = 0; c < sets; c++) {
                intercepts[c] -= mean;
            }
        }
        return new double[][] {coefficients, intercepts};
    }
}
