"""Keras 3 ``fit``/``evaluate``/``predict`` watched for silent training bugs.

``fit_watch.py`` hooks the methods and measures, during the call, what a report needs
(which trainable weights changed, fit's History, the loss tracker's count);
``fit_symptoms.py`` turns one cell's measurements into entries, naming the cause from
what the user wrote (``user_code.py`` reads the cell's and the model's source).
"""
