"""safetensors of the numpy stand-in: only `torch.save_file` / `torch.load_file`."""
