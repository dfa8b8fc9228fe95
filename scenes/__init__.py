"""The lecture's scenes. Importing this package loads neither manim nor the model."""
