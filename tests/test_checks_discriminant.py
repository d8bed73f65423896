"""scikit-learn's estimator checks on every estimator of linbook.discriminant."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import linbook

_PREDICT_MARGINALISES = (
    "predict marginalises NaN features out (a missing feature is integrated over, MLAPP 8.6.2; "
    "tested in tests/test_discriminant.py), so predict does not reject NaN; fit does")
_WITHIN_CLASS_CONSTANT = (
    "the check's data have a feature that is constant within each class: its within-class variance "
    "is 0, the Gaussian MLE does not exist, and fit raises a ValueError that names the cure; "
    "sample_weight is tested in tests/test_discriminant.py")
_D_GREATER_THAN_N = (
    "the check's data have 30 features and 15 samples, so the MLE covariance is singular and fit "
    "raises a ValueError naming RDA; weights = repeated rows is tested in tests/test_discriminant.py")

EXPECTED = {
    "QDA": {"check_estimators_nan_inf": _PREDICT_MARGINALISES,
            "check_sample_weights_shape": _WITHIN_CLASS_CONSTANT,
            "check_sample_weights_not_overwritten": _WITHIN_CLASS_CONSTANT,
            "check_sample_weight_equivalence_on_dense_data": _D_GREATER_THAN_N},
    "LDA": {"check_estimators_nan_inf": _PREDICT_MARGINALISES,
            "check_sample_weights_shape": _WITHIN_CLASS_CONSTANT,
            "check_sample_weights_not_overwritten": _WITHIN_CLASS_CONSTANT,
            "check_sample_weight_equivalence_on_dense_data": _D_GREATER_THAN_N},
    "RDA": {"check_estimators_nan_inf": _PREDICT_MARGINALISES,
            "check_sample_weights_shape": _WITHIN_CLASS_CONSTANT,
            "check_sample_weights_not_overwritten": _WITHIN_CLASS_CONSTANT},
    "DiagonalLDA": {"check_sample_weights_shape": _WITHIN_CLASS_CONSTANT,
                    "check_sample_weights_not_overwritten": _WITHIN_CLASS_CONSTANT},
    "NearestShrunkenCentroids": {"check_sample_weights_shape": _WITHIN_CLASS_CONSTANT,
                                 "check_sample_weights_not_overwritten": _WITHIN_CLASS_CONSTANT},
}

ESTIMATORS = [linbook.QDA(), linbook.LDA(), linbook.RDA(), linbook.DiagonalLDA(), linbook.GaussianNaiveBayes(),
              linbook.NearestShrunkenCentroids(shrink_threshold=0.5), linbook.FisherLDA()]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED.get(type(est).__name__, {}))
def test_sklearn_compatible(estimator, check):
    check(estimator)
