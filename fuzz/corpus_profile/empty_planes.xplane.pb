
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU
	/host:CPU