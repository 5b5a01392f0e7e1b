
£d
»0
%/job:ps/replica:0/task:0/device:CPU:0(
_SOURCEêÆ—½æë (B_SOURCE = NoOp()V
embedding/embedding_weightsíÆ—½æë (B*embedding/embedding_weights = VariableV2()y
 embedding/embedding_weights/readñÆ—½æë (BHembedding/embedding_weights/read = Identity(embedding/embedding_weights)<
dense_1/kernelôÆ—½æë (Bdense_1/kernel = VariableV2()T
dense_1/kernel/read÷Æ—½æë (B.dense_1/kernel/read = Identity(dense_1/kernel)P8
dense_1/biasúÆ—½æë (Bdense_1/bias = VariableV2()L
dense_1/bias/readÿÆ—½æë (B*dense_1/bias/read = Identity(dense_1/bias)>
dense_2/kernelÇ—½æë (Bdense_2/kernel = VariableV2()PR
dense_2/kernel/read†Ç—½æë (B.dense_2/kernel/read = Identity(dense_2/kernel)8
dense_2/biasˆÇ—½æë (Bdense_2/bias = VariableV2()L
dense_2/bias/readŒÇ—½æë (B*dense_2/bias/read = Identity(dense_2/bias)<
dense_3/kernelÇ—½æë (Bdense_3/kernel = VariableV2()R
dense_3/kernel/read“Ç—½æë (B.dense_3/kernel/read = Identity(dense_3/kernel)8
dense_3/bias–Ç—½æë (Bdense_3/bias = VariableV2()L
dense_3/bias/readšÇ—½æë (B*dense_3/bias/read = Identity(dense_3/bias):
logits/kernelÇ—½æë (Blogits/kernel = VariableV2()O
logits/kernel/read¡Ç—½æë (B,logits/kernel/read = Identity(logits/kernel)6
logits/bias¤Ç—½æë (Blogits/bias = VariableV2()I
logits/bias/read§Ç—½æë (B(logits/bias/read = Identity(logits/bias)6
global_stepªÇ—½æë (Bglobal_step = VariableV2()I
global_step/read®Ç—½æë (B(global_step/read = Identity(global_step)f
#embedding/embedding_weights/Adagrad²Ç—½æë (B2embedding/embedding_weights/Adagrad = VariableV2()“

RecvTensor·×—½æë L(LBx[32768B] edge_32_IteratorGetNext from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0©
embedding/embedding_lookup„Ø—½æë ª
(ª
B|embedding/embedding_lookup = GatherV2(embedding/embedding_weights/read, IteratorGetNext_S1, embedding/embedding_lookup/axis)ª

RecvTensorŠİ™½æë -(-B[4B] edge_89_gradients/logits/BiasAdd_grad/BiasAddGrad from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0ª

RecvTensor”İ™½æë -(-BŒ[256B] edge_87_gradients/logits/MatMul_grad/MatMul_1 from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0Pò
7GradientDescent/update_logits/bias/ApplyGradientDescentºİ™½æë (B©GradientDescent/update_logits/bias/ApplyGradientDescent = ApplyGradientDescent(logits/bias, GradientDescent/learning_rate, gradients/logits/BiasAdd_grad/BiasAddGrad_S39)ô
9GradientDescent/update_logits/kernel/ApplyGradientDescentÄİ™½æë (B©GradientDescent/update_logits/kernel/ApplyGradientDescent = ApplyGradientDescent(logits/kernel, GradientDescent/learning_rate, gradients/logits/MatMul_grad/MatMul_1_S37)­

RecvTensorúİ™½æë -(-B‘[256B] edge_85_gradients/dense_3/BiasAdd_grad/BiasAddGrad from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0ö
8GradientDescent/update_dense_3/bias/ApplyGradientDescentªŞ™½æë (B¬GradientDescent/update_dense_3/bias/ApplyGradientDescent = ApplyGradientDescent(dense_3/bias, GradientDescent/learning_rate, gradients/dense_3/BiasAdd_grad/BiasAddGrad_S35)«

RecvTensorÒé™½æë B(BB[32768B] edge_83_gradients/dense_3/MatMul_grad/MatMul_1 from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0ø
:GradientDescent/update_dense_3/kernel/ApplyGradientDescent—ê™½æë (B¬GradientDescent/update_dense_3/kernel/ApplyGradientDescent = ApplyGradientDescent(dense_3/kernel, GradientDescent/learning_rate, gradients/dense_3/MatMul_grad/MatMul_1_S33)­

RecvTensorüõ™½æë *(*B‘[512B] edge_81_gradients/dense_2/BiasAdd_grad/BiasAddGrad from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0ö
8GradientDescent/update_dense_2/bias/ApplyGradientDescentªö™½æë (B¬GradientDescent/update_dense_2/bias/ApplyGradientDescent = ApplyGradientDescent(dense_2/bias, GradientDescent/learning_rate, gradients/dense_2/BiasAdd_grad/BiasAddGrad_S31)¬

RecvTensorã¢š½æë ”(”B[0.1MB] edge_79_gradients/dense_2/MatMul_grad/MatMul_1 from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0ø
:GradientDescent/update_dense_2/kernel/ApplyGradientDescentú£š½æë "("B¬GradientDescent/update_dense_2/kernel/ApplyGradientDescent = ApplyGradientDescent(dense_2/kernel, GradientDescent/learning_rate, gradients/dense_2/MatMul_grad/MatMul_1_S29)®

RecvTensorîÒš½æë .(.B’[1024B] edge_77_gradients/dense_1/BiasAdd_grad/BiasAddGrad from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0ö
8GradientDescent/update_dense_1/bias/ApplyGradientDescentŸÓš½æë (B¬GradientDescent/update_dense_1/bias/ApplyGradientDescent = ApplyGradientDescent(dense_1/bias, GradientDescent/learning_rate, gradients/dense_1/BiasAdd_grad/BiasAddGrad_S27)¬

RecvTensor¹ƒœ½æë É(ÉB[0.5MB] edge_75_gradients/dense_1/MatMul_grad/MatMul_1 from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0ú
:GradientDescent/update_dense_1/kernel/ApplyGradientDescent…‡œ½æë €(€B¬GradientDescent/update_dense_1/kernel/ApplyGradientDescent = ApplyGradientDescent(dense_1/kernel, GradientDescent/learning_rate, gradients/dense_1/MatMul_grad/MatMul_1_S25)·

RecvTensor¿Á½æë “(“B™[1.0MB] edge_72_gradients/embedding/embedding_lookup_grad/Reshape from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0º

RecvTensorÄÁ½æë B(BBœ[32768B] edge_73_gradients/embedding/embedding_lookup_grad/Reshape_1 from /job:worker/replica:0/task:0/device:CPU:0 to /job:ps/replica:0/task:0/device:CPU:0Pì
=Adagrad/update_embedding/embedding_weights/SparseApplyAdagradÕÈ½æë ì(ìB›Adagrad/update_embedding/embedding_weights/SparseApplyAdagrad = SparseApplyAdagrad(embedding/embedding_weights, embedding/embedding_weights/Adagrad, Adagrad/learning_rate, gradients/embedding/embedding_lookup_grad/Reshape_S21, gradients/embedding/embedding_lookup_grad/Reshape_1_S23)_
GradientDescentÉÙ½æë (B?GradientDescent = AssignAdd(global_step, GradientDescent/value)
â3
)/job:worker/replica:0/task:0/device:CPU:0(
_SOURCEÑÆ—½æë (B_SOURCE = NoOp()O
IteratorGetNextÕÆ—½æë ×(×B-IteratorGetNext = IteratorGetNext(IteratorV2)š

RecvTensor‰Ç—½æë æ(æB{[0.5MB] edge_24_dense_1/kernel/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0P–

RecvTensor¿Ç—½æë .(.By[1024B] edge_25_dense_1/bias/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0Pš

RecvTensoräÇ—½æë Š(ŠB{[0.1MB] edge_26_dense_2/kernel/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0P•

RecvTensorñÇ—½æë +(+Bx[512B] edge_27_dense_2/bias/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0P™

RecvTensorÈ—½æë D(DB|[32768B] edge_28_dense_3/kernel/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0P•

RecvTensor²È—½æë +(+Bx[256B] edge_29_dense_3/bias/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0P–

RecvTensorùÈ—½æë *(*By[256B] edge_30_logits/kernel/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0P’

RecvTensorŞÉ—½æë 0(0Bu[4B] edge_31_logits/bias/read from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0P 

RecvTensorÂâ—½æë ™(™B‚[1.0MB] edge_34_embedding/embedding_lookup from /job:ps/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0u
embedding/ReshapeÜé—½æë (BSembedding/Reshape = Reshape(embedding/embedding_lookup_S3, embedding/Reshape/shape)e
dense_1/MatMulãé—½æë ä²(ä²BBdense_1/MatMul = MatMul(embedding/Reshape, dense_1/kernel/read_S5)a
dense_1/BiasAddÉœ™½æë ¾(¾B?dense_1/BiasAdd = BiasAdd(dense_1/MatMul, dense_1/bias/read_S7)C
dense_1/Relu‰™½æë ¼(¼B$dense_1/Relu = Relu(dense_1/BiasAdd)^
dense_2/MatMulÇŸ™½æë ß.(ß.B=dense_2/MatMul = MatMul(dense_1/Relu, dense_2/kernel/read_S9)`
dense_2/BiasAdd¨Î™½æë _(_B@dense_2/BiasAdd = BiasAdd(dense_2/MatMul, dense_2/bias/read_S11)A
dense_2/Relu‰Ï™½æë a(aB$dense_2/Relu = Relu(dense_2/BiasAdd)_
dense_3/MatMulìÏ™½æë Ø(ØB>dense_3/MatMul = MatMul(dense_2/Relu, dense_3/kernel/read_S13)`
dense_3/BiasAddÆÛ™½æë .(.B@dense_3/BiasAdd = BiasAdd(dense_3/MatMul, dense_3/bias/read_S15)A
dense_3/ReluöÛ™½æë 1(1B$dense_3/Relu = Relu(dense_3/BiasAdd)Z
logits/MatMul©Ü™½æë (B<logits/MatMul = MatMul(dense_3/Relu, logits/kernel/read_S17)\
logits/BiasAddºÜ™½æë (B=logits/BiasAdd = BiasAdd(logits/MatMul, logits/bias/read_S19)f
loss/logistic_loss/mulÀÜ™½æë (B?loss/logistic_loss/mul = Mul(logits/BiasAdd, IteratorGetNext:1)a
loss/logistic_loss/Log1pÈÜ™½æë (B8loss/logistic_loss/Log1p = Log1p(loss/logistic_loss/mul)P
	loss/MeanÑÜ™½æë (B6loss/Mean = Mean(loss/logistic_loss/Log1p, loss/Const)\
gradients/Fill×Ü™½æë (B;gradients/Fill = Fill(gradients/Shape, gradients/grad_ys_0)P™
 gradients/loss/Mean_grad/truedivÜÜ™½æë (Bhgradients/loss/Mean_grad/truediv = RealDiv(gradients/loss/Mean_grad/Tile, gradients/loss/Mean_grad/Cast)Ä
+gradients/loss/logistic_loss/Log1p_grad/muläÜ™½æë (B‡gradients/loss/logistic_loss/Log1p_grad/mul = Mul(gradients/loss/Mean_grad/truediv, gradients/loss/logistic_loss/Log1p_grad/Reciprocal)©
)gradients/loss/logistic_loss/mul_grad/MulìÜ™½æë (Bogradients/loss/logistic_loss/mul_grad/Mul = Mul(gradients/loss/logistic_loss/Log1p_grad/mul, IteratorGetNext:1)œ
)gradients/logits/BiasAdd_grad/BiasAddGradôÜ™½æë (Bbgradients/logits/BiasAdd_grad/BiasAddGrad = BiasAddGrad(gradients/loss/logistic_loss/mul_grad/Mul)
%gradients/logits/MatMul_grad/MatMul_1ùÜ™½æë (Bggradients/logits/MatMul_grad/MatMul_1 = MatMul(dense_3/Relu, gradients/loss/logistic_loss/mul_grad/Mul)£
#gradients/logits/MatMul_grad/MatMul‰İ™½æë (Bogradients/logits/MatMul_grad/MatMul = MatMul(gradients/loss/logistic_loss/mul_grad/Mul, logits/kernel/read_S17)—
$gradients/dense_3/Relu_grad/ReluGrad™İ™½æë 2(2Bbgradients/dense_3/Relu_grad/ReluGrad = ReluGrad(gradients/logits/MatMul_grad/MatMul, dense_3/Relu)™
*gradients/dense_3/BiasAdd_grad/BiasAddGradÍİ™½æë (B^gradients/dense_3/BiasAdd_grad/BiasAddGrad = BiasAddGrad(gradients/dense_3/Relu_grad/ReluGrad)œ
&gradients/dense_3/MatMul_grad/MatMul_1èİ™½æë ×(×Bcgradients/dense_3/MatMul_grad/MatMul_1 = MatMul(dense_2/Relu, gradients/dense_3/Relu_grad/ReluGrad)£
$gradients/dense_3/MatMul_grad/MatMulÁé™½æë –(–Blgradients/dense_3/MatMul_grad/MatMul = MatMul(gradients/dense_3/Relu_grad/ReluGrad, dense_3/kernel/read_S13)˜
$gradients/dense_2/Relu_grad/ReluGradÙô™½æë a(aBcgradients/dense_2/Relu_grad/ReluGrad = ReluGrad(gradients/dense_3/MatMul_grad/MatMul, dense_2/Relu)™
*gradients/dense_2/BiasAdd_grad/BiasAddGrad¼õ™½æë 2(2B^gradients/dense_2/BiasAdd_grad/BiasAddGrad = BiasAddGrad(gradients/dense_2/Relu_grad/ReluGrad)œ
&gradients/dense_2/MatMul_grad/MatMul_1ğõ™½æë æ,(æ,Bcgradients/dense_2/MatMul_grad/MatMul_1 = MatMul(dense_1/Relu, gradients/dense_2/Relu_grad/ReluGrad)¢
$gradients/dense_2/MatMul_grad/MatMulØ¢š½æë ì-(ì-Bkgradients/dense_2/MatMul_grad/MatMul = MatMul(gradients/dense_2/Relu_grad/ReluGrad, dense_2/kernel/read_S9)š
$gradients/dense_1/Relu_grad/ReluGradÆĞš½æë º(ºBcgradients/dense_1/Relu_grad/ReluGrad = ReluGrad(gradients/dense_2/MatMul_grad/MatMul, dense_1/Relu)™
*gradients/dense_1/BiasAdd_grad/BiasAddGrad‚Òš½æë ](]B^gradients/dense_1/BiasAdd_grad/BiasAddGrad = BiasAddGrad(gradients/dense_1/Relu_grad/ReluGrad)£
&gradients/dense_1/MatMul_grad/MatMul_1áÒš½æë È°(È°Bhgradients/dense_1/MatMul_grad/MatMul_1 = MatMul(embedding/Reshape, gradients/dense_1/Relu_grad/ReluGrad)¤
$gradients/dense_1/MatMul_grad/MatMul«ƒœ½æë ü½(ü½Bkgradients/dense_1/MatMul_grad/MatMul = MatMul(gradients/dense_1/Relu_grad/ReluGrad, dense_1/kernel/read_S5)º
(gradients/embedding/Reshape_grad/Reshape¨Á½æë (B€gradients/embedding/Reshape_grad/Reshape = Reshape(gradients/dense_1/MatMul_grad/MatMul, gradients/embedding/Reshape_grad/Shape)Ú
1gradients/embedding/embedding_lookup_grad/Reshape­Á½æë (B—gradients/embedding/embedding_lookup_grad/Reshape = Reshape(gradients/embedding/Reshape_grad/Reshape, gradients/embedding/embedding_lookup_grad/concat)É
3gradients/embedding/embedding_lookup_grad/Reshape_1²Á½æë (B„gradients/embedding/embedding_lookup_grad/Reshape_1 = Reshape(IteratorGetNext, gradients/embedding/embedding_lookup_grad/ExpandDims).

group_depsÜÙ½æë (Bgroup_deps = NoOp()