import tensorflow as tensorflow_lib

radius = tensorflow_lib.constant(2.0)
height = tensorflow_lib.constant(5.0)

with tensorflow_lib.GradientTape(persistent=True, watch_accessed_variables=False) as sens:
    sens.watch(radius)
    sens.watch(height)
    volume = 3.14159 * radius ** 2 * height
    surface = 2 * 3.14159 * radius * (radius + height)

print("dV/dr =", sens.gradient(volume, radius).numpy())
print("dV/dh =", sens.gradient(volume, height).numpy())
print("dS/dr =", sens.gradient(surface, radius).numpy())
