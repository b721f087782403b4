# Sources of ss_math's train area.
target_sources(ss_math PRIVATE
  src/train/dense_model.cpp
  src/train/hogwild_trainer.cpp
  src/train/train_step.cpp)
