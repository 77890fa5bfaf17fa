"""scikit-learn estimators on the engine, one module per family."""
