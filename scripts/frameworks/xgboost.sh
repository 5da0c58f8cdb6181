#!/usr/bin/env bash
# .venv-xgboost (scripts/frameworks/make-venv.sh): XGBoost with numpy/scipy, scikit-learn (its
# estimators, XGBClassifier) and the smd wheel.
# Prints the venv's python.
exec "$(dirname "$0")/make-venv.sh" xgboost xgboost==3.2.0 numpy==2.4.6 scipy==1.17.1 scikit-learn==1.9.1 pytest==9.2.0
