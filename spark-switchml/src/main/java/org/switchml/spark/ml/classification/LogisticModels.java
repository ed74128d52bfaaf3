package org.switchml.spark.ml.classification;

import org.apache.spark.ml.classification.BinaryLogisticRegressionTrainingSummaryImpl;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.classification.LogisticRegressionTrainingSummary;
import org.apache.spark.ml.classification.LogisticRegressionTrainingSummaryImpl;
import org.apache.spark.ml.classification.ProbabilisticClassificationModel;
import org.apache.spark.ml.linalg.DenseMatrix;
import org.apache.spark.ml.linalg.Matrix;
import org.apache.spark.ml.linalg.SparseMatrix;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ml.linear.LogisticObjective;
import scala.Option;
import scala.Tuple3;

/** The stock {@link LogisticRegressionModel}s a logistic fit ends with, with MLlib's training summary. */
final class LogisticModels {
    private LogisticModels() {}

    /** The model at the optimizer's solution, back in the original space. */
    static LogisticRegressionModel trained(
            final LogisticRegression lr,
            final Dataset<?> dataset,
            final LogisticProblem problem,
            final LogisticObjective objective,
            final QuasiNewton optimizer,
            final double[] state) {
        final double[] solution = optimizer.solution(state);
        objective.fromCentered(solution);
        final double[][] model = objective.toModel(solution, lr.getRegParam() == 0.0, LogisticChecks.bounded(lr));
        final Matrix coefficients = new DenseMatrix(problem.sets(), problem.numFeatures(), model[0], true).compressed();
        final Vector intercepts = lr.getFitIntercept() || !problem.multinomial()
                ? Vectors.dense(model[1]).compressed()
                : Vectors.sparse(problem.sets(), new int[0], new double[0]).compressed();
        return create(
                lr,
                dataset,
                problem.numClasses(),
                problem.multinomial(),
                coefficients,
                intercepts,
                optimizer.objectiveHistory(state));
    }

    /**
     * All labels are equal and the intercepts are free: MLlib's model without training (zero coefficients,
     * infinite intercepts).
     */
    static LogisticRegressionModel withoutTraining(
            final LogisticRegression lr, final Dataset<?> dataset, final LogisticProblem problem) {
        final int sets = problem.sets();
        final int numClasses = problem.numClasses();
        final Matrix coef = new SparseMatrix(
                        sets, problem.numFeatures(), new int[sets + 1], new int[0], new double[0], true)
                .compressed();
        final Vector intercept = problem.multinomial()
                ? Vectors.sparse(
                        numClasses, new int[] {problem.mostFrequentLabel()}, new double[] {Double.POSITIVE_INFINITY})
                : Vectors.dense(numClasses == 2 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY);
        return create(lr, dataset, numClasses, problem.multinomial(), coef, intercept, new double[] {0.0});
    }

    /** The stock model with {@code lr}'s params and MLlib's training summary attached. */
    private static LogisticRegressionModel create(
            final LogisticRegression lr,
            final Dataset<?> dataset,
            final int numClasses,
            final boolean multinomial,
            final Matrix coefficients,
            final Vector intercepts,
            final double[] objectiveHistory) {
        final LogisticRegressionModel model = lr.copyValues(
                new LogisticRegressionModel(lr.uid(), coefficients, intercepts, numClasses, multinomial),
                ParamMap.empty());
        final String weightColName = lr.isDefined(lr.weightCol()) ? lr.getWeightCol() : "weightCol";
        final Tuple3<ProbabilisticClassificationModel<Vector, LogisticRegressionModel>, String, String> found =
                model.findSummaryModel();
        final Dataset<Row> predictions = found._1().transform(dataset);
        final LogisticRegressionTrainingSummary summary = numClasses <= 2
                ? new BinaryLogisticRegressionTrainingSummaryImpl(
                        predictions,
                        found._2(),
                        found._3(),
                        lr.getLabelCol(),
                        lr.getFeaturesCol(),
                        weightColName,
                        objectiveHistory)
                : new LogisticRegressionTrainingSummaryImpl(
                        predictions,
                        found._2(),
                        found._3(),
                        lr.getLabelCol(),
                        lr.getFeaturesCol(),
                        weightColName,
                        objectiveHistory);
        model.setSummary(Option.apply(summary));
        return model;
    }
}
