# Pure-python transcription of Ultralytics ap_per_class / compute_ap / smooth
# (numpy semantics of interp, linspace, trapz and convolve spelled out), run on
# the splitmix64 data of tests/detectmath_metrics.c test_random_reference;
# prints the expected rows of ap_reference. Run: python3 tests/detectmath_ap_reference.py
import struct, math
M=(1<<64)-1
class R:
    def __init__(s,seed): s.s=seed
    def next(s):
        s.s=(s.s+0x9E3779B97F4A7C15)&M; z=s.s
        z=((z^(z>>30))*0xBF58476D1CE4E5B9)&M
        z=((z^(z>>27))*0x94D049BB133111EB)&M
        return z^(z>>31)
    def uni(s,lo,hi): return lo+(hi-lo)*float(s.next()>>11)*(1.0/9007199254740992.0)
def f32(x): return struct.unpack('f',struct.pack('f',x))[0]
def interp(x,xp,fp,left=None,right=None):
    left=fp[0] if left is None else left; right=fp[-1] if right is None else right
    n=len(xp)
    if x>xp[-1]: return right
    if x<xp[0]: return left
    lo,hi=0,n
    while lo<hi:
        mid=(lo+hi)//2
        if x>=xp[mid]: lo=mid+1
        else: hi=mid
    j=lo-1
    if j==n-1 or xp[j]==x: return fp[j]
    sl=(fp[j+1]-fp[j])/(xp[j+1]-xp[j]); return sl*(x-xp[j])+fp[j]
def compute_ap(rec,prec):
    mrec=[0.0]+rec+[1.0]; mpre=[1.0]+prec+[0.0]
    for i in range(len(mpre)-2,-1,-1): mpre[i]=max(mpre[i],mpre[i+1])
    x=[k*0.01 for k in range(100)]+[1.0]
    y=[interp(v,mrec,mpre) for v in x]
    return sum((x[i+1]-x[i])*(y[i+1]+y[i])/2.0 for i in range(100))
def smooth(y,f=0.1):
    nf=round(len(y)*f*2)//2+1; h=nf//2
    yp=[y[0]]*h+y+[y[-1]]*h
    return [sum(yp[k+m]*(1.0/nf) for m in range(nf)) for k in range(len(y))]
def ap_per_class(tp,conf,pcls,tcls,T):
    order=sorted(range(len(conf)),key=lambda i:(-conf[i],i))
    tp=[tp[i] for i in order]; conf=[conf[i] for i in order]; pcls=[pcls[i] for i in order]
    ucls=sorted(set(tcls)); nt={c:tcls.count(c) for c in ucls}
    px=[k*(1.0/999) for k in range(999)]+[1.0]
    ap={}; pc=[]; rc=[]
    for c in ucls:
        idx=[i for i in range(len(pcls)) if pcls[i]==c]
        if not idx: ap[c]=[0.0]*T; pc.append([0.0]*1000); rc.append([0.0]*1000); continue
        recs=[];precs=[]
        for t in range(T):
            tpc=fpc=0.0; r=[];p=[]
            for i in idx:
                tpc+=tp[i][t]; fpc+=1-tp[i][t]; r.append(tpc/(nt[c]+1e-16)); p.append(tpc/(tpc+fpc))
            recs.append(r);precs.append(p)
        nc_=[-conf[i] for i in idx]
        rc.append([interp(-x,nc_,recs[0],left=0) for x in px])
        pc.append([interp(-x,nc_,precs[0],left=1) for x in px])
        ap[c]=[compute_ap(recs[t],precs[t]) for t in range(T)]
    f1=[[2*p*r/(p+r+1e-16) for p,r in zip(P,Rr)] for P,Rr in zip(pc,rc)]
    mean=[sum(f[k] for f in f1)/len(f1) for k in range(1000)]
    sm=smooth(mean); i=max(range(1000),key=lambda k:(sm[k],-k))
    P=[p[i] for p in pc]; Rr=[r[i] for r in rc]
    n=len(ucls)
    return sum(P)/n, sum(Rr)/n, sum(ap[c][0] for c in ucls)/n, sum(sum(ap[c]) for c in ucls)/(n*T), px[i]
for seed in (11, 12, 13):
    g=R(seed); T=10
    tp=[];conf=[];pcls=[]
    for i in range(300):
        c=g.next()%4; hit=g.next()%5==0; lv=1+g.next()%10 if hit else 0
        cf=f32(g.uni(0.3,1.0) if hit else g.uni(0.0,0.8))
        pcls.append(c); conf.append(cf); tp.append([1 if t<lv else 0 for t in range(T)])
    tcls=[g.next()%4 for _ in range(120)]
    mp,mr,m50,m,bc=ap_per_class(tp,conf,pcls,tcls,T)
    print("    {%d, %.15g, %.15g, %.15g, %.15g, %.15g}," % (seed,mp,mr,m50,m,bc))
