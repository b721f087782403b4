# Sources of ss_core's train area.
target_sources(ss_core PRIVATE
  src/train/dense_model.cpp
  src/train/hogwild_trainer.cpp
  src/train/train_step.cpp)
